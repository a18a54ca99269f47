// Command dkimrecord prints the DNS TXT record that publishes a DKIM key's
// public half, for the key given to postroom's Options.DKIM:
//
//	go run github.com/postroom/postroom/cmd/dkimrecord -key dkim.pem -selector s1 -domain example.com
//
// prints one line in zone-file form, ready for a zone file or to copy
// field by field into a DNS provider's form:
//
//	s1._domainkey.example.com. 3600 IN TXT "v=DKIM1; k=ed25519; p=..."
//
// With -value it prints only the record's text, unsplit, for a form that
// asks for the value alone.
//
// The key is a PEM file: a private key as openssl genpkey writes it
// (PKCS #8, "PRIVATE KEY"), an RSA key in PKCS #1 ("RSA PRIVATE KEY"), or
// a public key ("PUBLIC KEY"). For ed25519 the p= tag holds the raw
// 32-byte public key (RFC 8463, section 4.2), not the SubjectPublicKeyInfo
// that openssl pkey -pubout prints; verifiers refuse that one. For RSA it
// holds the DER SubjectPublicKeyInfo (RFC 6376, section 3.6.1), which is
// longer than the 255 bytes one string of a TXT record holds: the zone
// line splits it into several strings, which DNS joins again. RSA keys
// under postroom.MinDKIMRSABits bits are refused, as the Mailer refuses
// them.
//
// Exit status: 0 on success, 1 when the key cannot be read or used, 2 for
// a usage error.
package main

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/postroom/postroom"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: it parses args, writes the record to stdout and any
// error to stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dkimrecord", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyFile := fs.String("key", "", "the PEM `file` of the key (private or public)")
	selector := fs.String("selector", "", "the key's `selector`, DKIMSigner.Selector (the s= tag)")
	domain := fs.String("domain", "", "the signing `domain`, DKIMSigner.Domain (the d= tag)")
	ttl := fs.Int("ttl", 3600, "the record's time to live, in `seconds`")
	valueOnly := fs.Bool("value", false, "print only the record's text, unsplit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *keyFile == "" || *selector == "" || *domain == "" || *ttl < 0 {
		fmt.Fprintln(stderr, "usage: dkimrecord -key dkim.pem -selector s1 -domain example.com [-ttl 3600] [-value]")
		return 2
	}
	data, err := os.ReadFile(*keyFile)
	if err != nil {
		fmt.Fprintln(stderr, "dkimrecord:", err)
		return 1
	}
	rec, err := newRecord(data, *selector, *domain)
	if err != nil {
		fmt.Fprintf(stderr, "dkimrecord: %s: %v\n", *keyFile, err)
		return 1
	}
	if *valueOnly {
		fmt.Fprintln(stdout, rec.Value)
	} else {
		fmt.Fprintln(stdout, rec.zoneLine(*ttl))
	}
	return 0
}

// record is a DKIM key record: the name it is published at and its text.
type record struct {
	Name  string // selector._domainkey.domain, without the final dot
	Value string // v=DKIM1; k=...; p=...
}

// label is one DNS label of a selector or domain.
var label = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$`)

// checkName returns an error unless name is dot-separated DNS labels.
func checkName(field, name string) error {
	for l := range strings.SplitSeq(strings.TrimSuffix(name, "."), ".") {
		if !label.MatchString(l) {
			return fmt.Errorf("-%s %q: not a DNS name (labels of letters, digits, - and _, dot-separated)", field, name)
		}
	}
	return nil
}

// newRecord returns the record publishing the public half of the PEM key
// in data under selector and domain.
func newRecord(data []byte, selector, domain string) (record, error) {
	if err := checkName("selector", selector); err != nil {
		return record{}, err
	}
	if err := checkName("domain", domain); err != nil {
		return record{}, err
	}
	pub, err := publicKey(data)
	if err != nil {
		return record{}, err
	}
	var value string
	switch pub := pub.(type) {
	case ed25519.PublicKey:
		// RFC 8463, section 4.2: the base64 of the raw public key.
		value = "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub)
	case *rsa.PublicKey:
		if bits := pub.N.BitLen(); bits < postroom.MinDKIMRSABits {
			return record{}, fmt.Errorf("an RSA key of %d bits; postroom signs with %d bits or more", bits, postroom.MinDKIMRSABits)
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return record{}, err
		}
		value = "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(der)
	default:
		return record{}, fmt.Errorf("a %T key; DKIM keys are ed25519 or RSA", pub)
	}
	name := strings.ToLower(strings.TrimSuffix(selector, ".") + "._domainkey." + strings.TrimSuffix(domain, "."))
	return record{Name: name, Value: value}, nil
}

// publicKey returns the public key of the first PEM block of data.
func publicKey(data []byte) (crypto.PublicKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil {
		return nil, errors.New("no PEM block (want the key as openssl genpkey writes it)")
	}
	switch blk.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, err
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("a %T key; DKIM keys are ed25519 or RSA", k)
		}
		return s.Public(), nil
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
		if err != nil {
			return nil, err
		}
		return k.Public(), nil
	case "PUBLIC KEY":
		return x509.ParsePKIXPublicKey(blk.Bytes)
	}
	return nil, fmt.Errorf("a PEM block of type %q; want PRIVATE KEY, RSA PRIVATE KEY or PUBLIC KEY", blk.Type)
}

// maxString is the most bytes one character-string of a TXT record holds
// (RFC 1035, section 3.3).
const maxString = 255

// zoneLine returns the record as a zone-file line, its text split into
// strings of at most maxString bytes.
func (r record) zoneLine(ttl int) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s. %d IN TXT", r.Name, ttl)
	for v := r.Value; v != ""; {
		n := min(len(v), maxString)
		fmt.Fprintf(&b, " %q", v[:n]) // base64, tags and "; ": nothing to escape
		v = v[n:]
	}
	return b.String()
}
