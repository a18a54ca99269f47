package bench

import (
	"context"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// Stored template ids of TemplateCall: the workload's html and text bodies.
const (
	StoredHTMLID = "workload.html"
	StoredTextID = "workload.txt"
)

// StoredTemplates returns the templates TemplateCall looks up, by id: the
// workload's html and text bodies. They belong to the workload's account,
// w.Base.AccountID.
func StoredTemplates(w *fixture.Workload) map[string]string {
	return map[string]string{
		StoredHTMLID: w.Base.Message.HTML,
		StoredTextID: w.Base.Message.Text,
	}
}

// TemplateCall returns Call(n) as a send_template call: its html and text
// bodies replaced by the ids of StoredTemplates.
func TemplateCall(w *fixture.Workload, n int) *postroom.Call {
	call := w.Call(n)
	call.Message.HTML, call.Message.Text = "", ""
	call.Message.HTMLTemplateID, call.Message.TextTemplateID = StoredHTMLID, StoredTextID
	return call
}

// SendTemplate measures one send_template call to one recipient, its html
// and text bodies looked up in store, which must hold StoredTemplates(w)
// under the workload's account: the lookups, the compilation of the call's
// templates, rendering, MIME and the Mailer's own work, into a transport
// that discards. Compared across stores, the difference is the lookups'
// cost: a round trip to the database for an SQL store, a map read for
// Memory. With warm, the Mailer's compiled-template cache is on (as by
// default), so every call after the first compiles nothing; without, it is
// off and every call compiles its templates.
func SendTemplate(b *testing.B, w *fixture.Workload, store postroom.TemplateStore, warm bool) {
	size := messageSize(b, w)
	opts := postroom.Options{Auth: postroom.NoAuth{}, Templates: store}
	if !warm {
		opts.TemplateCacheEntries = -1
	}
	mailer, err := postroom.New(Discard(), opts)
	if err != nil {
		b.Fatal(err)
	}
	call := TemplateCall(w, 1)
	ctx := b.Context()
	m := startMeter(b, size, 1, false)
	for b.Loop() {
		if err := sendTemplateAll(ctx, mailer, call); err != nil {
			b.Fatal(err)
		}
	}
	m.stop()
}

// sendTemplateAll is SendAll for a send_template call.
func sendTemplateAll(ctx context.Context, m *postroom.Mailer, call *postroom.Call) error {
	results, err := m.SendTemplate(ctx, call)
	if err != nil {
		return err
	}
	return allSent(results)
}
