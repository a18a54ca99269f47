package bench

import (
	"crypto"
	"testing"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// PipelineObviousDKIM is PipelineObvious with every message signed the
// obvious way: go-msgauth's dkim.Sign over the message go-mail wrote
// (Obvious.DKIM), with a new key of the given kind (one of DKIMKeys but
// ""), the domain and selector of PipelineDKIM's signer, relaxed/relaxed
// canonicalization as postroom signs, and every header field of the
// message signed (go-msgauth's default). It sets against PipelineDKIM.
func PipelineObviousDKIM(b *testing.B, w *fixture.Workload, n int, kind string) {
	key, err := dkimKey(kind)
	if err != nil {
		b.Fatal(err)
	}
	obviousPipeline(b, w, fixture.PlainCall(w.Call(n)), &Obvious{DKIM: obviousDKIM(key)})
}

// obviousDKIM is the obvious way's signing options with key.
func obviousDKIM(key crypto.Signer) *dkim.SignOptions {
	return &dkim.SignOptions{
		Domain: dkimDomain, Selector: dkimSelector, Signer: key,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed,
		BodyCanonicalization:   dkim.CanonicalizationRelaxed,
	}
}
