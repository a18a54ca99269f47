package main

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/testenv"
	"github.com/postroom/postroom/transport"
)

// testKey is a freshly generated DKIM key and its PEM file, written as
// openssl genpkey writes it (PKCS #8).
type testKey struct {
	name string
	key  crypto.Signer
	file string
}

// newKeys generates an ed25519 and an rsa-2048 key into t's temp folder.
func newKeys(t *testing.T) []testKey {
	t.Helper()
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var keys []testKey
	for _, k := range []testKey{{name: "ed25519", key: ed}, {name: "rsa2048", key: rk}} {
		der, err := x509.MarshalPKCS8PrivateKey(k.key)
		if err != nil {
			t.Fatal(err)
		}
		k.file = writePEM(t, k.name+".pem", "PRIVATE KEY", der)
		keys = append(keys, k)
	}
	return keys
}

// writePEM writes one PEM block into t's temp folder and returns its path.
func writePEM(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// zoneLine is the command's output: name, TTL, and the TXT strings.
var zoneLine = regexp.MustCompile(`^(\S+)\. (\d+) IN TXT((?: "[^"]{1,255}")+)\n$`)

// printed runs the command with args and returns the record it prints,
// read as DNS would serve it: the name and the TXT strings joined.
func printed(t *testing.T, args ...string) (name, value string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("dkimrecord %s: exit %d: %s", strings.Join(args, " "), code, stderr.Bytes())
	}
	m := zoneLine.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("dkimrecord printed %q, not a zone-file TXT line", stdout.String())
	}
	for _, s := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(m[3], -1) {
		value += s[1]
	}
	return m[1], value
}

// signed returns a message the Mailer signed with key for example.com,
// selector s1.
func signed(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	tr := transport.NewMemory()
	m, err := postroom.New(tr, postroom.Options{
		Auth: postroom.NoAuth{},
		DKIM: []postroom.DKIMSigner{{Domain: "example.com", Selector: "s1", Key: key}},
	})
	if err != nil {
		t.Fatal(err)
	}
	results, err := m.Send(t.Context(), &postroom.Call{
		Message: postroom.Message{
			FromEmail: "news@example.com", FromName: "Example",
			Subject: "Hello {{name}}", HTML: "<p>Hello {{name}}</p>", Text: "Hello {{name}}",
		},
		Recipients: []postroom.Recipient{{Email: "ann@example.org", Params: map[string]any{"name": "Ann"}}},
	})
	if err != nil || len(results) != 1 || results[0].Status != postroom.StatusSent {
		t.Fatalf("Send: %v %+v", err, results)
	}
	env, ok := tr.Envelope(results[0].SendID)
	if !ok {
		t.Fatal("no envelope recorded")
	}
	return env.Data
}

// verifyGo verifies msg's one signature with go-msgauth, the key record
// answered from records; it returns the verification's error.
func verifyGo(t *testing.T, msg []byte, records map[string]string) error {
	t.Helper()
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(msg), &dkim.VerifyOptions{
		LookupTXT: func(domain string) ([]string, error) {
			if rec, ok := records[domain]; ok {
				return []string{rec}, nil
			}
			return nil, fmt.Errorf("no TXT record at %s", domain)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 {
		t.Fatalf("%d signatures, want 1", len(vs))
	}
	return vs[0].Err
}

// dkimpyScript verifies the one DKIM-Signature of the message file argv[2]
// with dkimpy, answering key queries from the JSON records in argv[1], and
// prints True or False.
const dkimpyScript = `
import json, sys, dkim
records = json.load(open(sys.argv[1]))
def dns(name, timeout=5):
    if isinstance(name, bytes):
        name = name.decode()
    rec = records.get(name.rstrip('.').lower())
    return rec.encode() if rec else None
try:
    print(dkim.verify(open(sys.argv[2], 'rb').read(), dnsfunc=dns))
except dkim.DKIMException:
    print(False)
`

// verifyPy verifies msg with Debian's python3-dkim (dkimpy), skipping the
// test when it is not installed (failing under CI=true).
func verifyPy(t *testing.T, msg []byte, records map[string]string) bool {
	t.Helper()
	testenv.Need(t, "python3-dkim", "/usr/bin/python3", "-c", "import dkim")
	dir := t.TempDir()
	recs, _ := json.Marshal(records)
	if err := os.WriteFile(filepath.Join(dir, "records.json"), recs, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "msg.eml"), msg, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "/usr/bin/python3", "-c", dkimpyScript,
		filepath.Join(dir, "records.json"), filepath.Join(dir, "msg.eml")).CombinedOutput()
	if err != nil {
		t.Fatalf("dkimpy: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out)) == "True"
}

// TestRecordVerifies signs a message with each key through the Mailer's
// Options.DKIM, takes the record the command prints for the key file, and
// verifies the signature against that record with two verifiers
// independent of postroom: go-msgauth and dkimpy.
func TestRecordVerifies(t *testing.T) {
	for _, k := range newKeys(t) {
		t.Run(k.name, func(t *testing.T) {
			name, value := printed(t, "-key", k.file, "-selector", "s1", "-domain", "example.com")
			if name != "s1._domainkey.example.com" {
				t.Errorf("record name %q, want s1._domainkey.example.com", name)
			}
			msg := signed(t, k.key)
			records := map[string]string{name: value}
			if err := verifyGo(t, msg, records); err != nil {
				t.Errorf("go-msgauth: %v\nrecord: %s", err, value)
			}
			if !verifyPy(t, msg, records) {
				t.Errorf("dkimpy: the signature does not verify against %s", value)
			}
		})
	}
}

// TestPubOutIsNotARecord shows why the command exists: the ed25519
// record made from openssl pkey -pubout's SubjectPublicKeyInfo, which the
// README once advised, does not verify, while the command's does.
func TestPubOutIsNotARecord(t *testing.T) {
	k := newKeys(t)[0]
	spki, err := x509.MarshalPKIXPublicKey(k.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	msg := signed(t, k.key)
	wrong := map[string]string{"s1._domainkey.example.com": "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(spki)}
	if err := verifyGo(t, msg, wrong); err == nil {
		t.Error("go-msgauth verified against the SubjectPublicKeyInfo record")
	}
	_, value := printed(t, "-key", k.file, "-selector", "s1", "-domain", "example.com")
	if value == wrong["s1._domainkey.example.com"] {
		t.Error("the command prints the SubjectPublicKeyInfo record")
	}
}

// TestKeyForms checks that the private key in PKCS #8 and PKCS #1, and
// the public key, give the same record, and that -value prints its text.
func TestKeyForms(t *testing.T) {
	keys := newKeys(t)
	rk := keys[1].key.(*rsa.PrivateKey)
	for _, k := range keys {
		spki, err := x509.MarshalPKIXPublicKey(k.key.Public())
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"PKCS #8": k.file, "public": writePEM(t, "pub.pem", "PUBLIC KEY", spki)}
		if k.key == crypto.Signer(rk) {
			files["PKCS #1"] = writePEM(t, "rsa.pem", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk))
		}
		_, want := printed(t, "-key", k.file, "-selector", "s1", "-domain", "example.com")
		for form, file := range files {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"-value", "-key", file, "-selector", "s1", "-domain", "example.com"}, &stdout, &stderr); code != 0 {
				t.Fatalf("%s %s: exit %d: %s", k.name, form, code, stderr.Bytes())
			}
			if got := strings.TrimSuffix(stdout.String(), "\n"); got != want {
				t.Errorf("%s %s: -value printed %q, want %q", k.name, form, got, want)
			}
		}
	}
}

// TestRefused checks the usage errors and the keys the Mailer would refuse.
func TestRefused(t *testing.T) {
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(small)
	if err != nil {
		t.Fatal(err)
	}
	smallFile := writePEM(t, "small.pem", "PRIVATE KEY", der)
	good := newKeys(t)[0].file
	notPEM := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(notPEM, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"no key", []string{"-selector", "s1", "-domain", "example.com"}, 2},
		{"no selector", []string{"-key", good, "-domain", "example.com"}, 2},
		{"extra argument", []string{"-key", good, "-selector", "s1", "-domain", "example.com", "x"}, 2},
		{"selector with a space", []string{"-key", good, "-selector", "s 1", "-domain", "example.com"}, 1},
		{"domain with an empty label", []string{"-key", good, "-selector", "s1", "-domain", "example..com"}, 1},
		{"missing file", []string{"-key", good + ".missing", "-selector", "s1", "-domain", "example.com"}, 1},
		{"not PEM", []string{"-key", notPEM, "-selector", "s1", "-domain", "example.com"}, 1},
		{"rsa-1024", []string{"-key", smallFile, "-selector", "s1", "-domain", "example.com"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(c.args, &stdout, &stderr); code != c.code || stdout.Len() != 0 || stderr.Len() == 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, nothing printed, a message", code, stdout.String(), stderr.String(), c.code)
			}
		})
	}
}
