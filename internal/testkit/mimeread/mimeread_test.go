package mimeread

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// crlf joins lines with CRLF, ending in one.
func crlf(lines ...string) string {
	return strings.Join(lines, "\r\n") + "\r\n"
}

func TestCheckLines(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantErr  error // nil: the data passes
		wantLine int
	}{
		{"good", crlf("Subject: hi", "", "body"), nil, 0},
		{"empty lines", crlf("", "", ""), nil, 0},
		{"998 octets", crlf(strings.Repeat("x", 998)), nil, 0},
		{"tab and DEL", crlf("a\tb\x7f"), nil, 0},
		{"empty", "", ErrNoCRLF, 0},
		{"no final CRLF", "Subject: hi\r\n\r\nbody", ErrNoCRLF, 0},
		{"bare LF", "Subject: hi\r\n\r\nline one\nline two\r\n", ErrBareCRLF, 3},
		{"bare LF at the end", "Subject: hi\r\n\r\nbody\n", ErrBareCRLF, 3},
		{"bare CR", "Subject: hi\r\n\r\nline one\rline two\r\n", ErrBareCRLF, 3},
		{"LF CR", "a\r\n\n\rb\r\n", ErrBareCRLF, 2},
		{"999 octets", crlf("a", strings.Repeat("x", 999)), ErrLongLine, 2},
		{"8-bit", crlf("Subject: Zoë"), ErrNot7Bit, 1},
		{"NUL", crlf("a", "b\x00c"), ErrNot7Bit, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckLines([]byte(tt.data))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("CheckLines: %v; want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CheckLines: %v; want %v", err, tt.wantErr)
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != tt.wantLine {
				t.Fatalf("CheckLines: %#v; want a *LineError at line %d", err, tt.wantLine)
			}
		})
	}
}

// testMessage is a hand-written message: html with one image, related,
// beside a text, alternative, beside an attachment, mixed. Its header has a
// folded field and an encoded word.
var testMessage = crlf(
	"From: Shop <shop@example.com>",
	"To: ann@example.org",
	"Subject: =?UTF-8?q?Caf=C3=A9?= for",
	" you",
	"MIME-Version: 1.0",
	`Content-Type: multipart/mixed; boundary="m"`,
	"",
	"--m",
	`Content-Type: multipart/alternative; boundary="a"`,
	"",
	"--a",
	"Content-Type: text/plain; charset=UTF-8",
	"Content-Transfer-Encoding: quoted-printable",
	"",
	"Caf=C3=A9 soft=",
	"break",
	"--a",
	`Content-Type: multipart/related; boundary="r"; type="text/html"`,
	"",
	"--r",
	"Content-Type: text/html; charset=UTF-8",
	"Content-Transfer-Encoding: Quoted-Printable",
	"",
	"<p>a=3Db</p>",
	"--r",
	"Content-Type: image/png",
	"Content-Transfer-Encoding: base64",
	"Content-ID: <logo@x>",
	"",
	"iVBO",
	"Rw==",
	"--r--",
	"--a--",
	"--m",
	"Content-Type: application/pdf",
	"Content-Transfer-Encoding: base64",
	"",
	"JVBERi0=",
	"--m--",
)

func TestParse(t *testing.T) {
	m := Parse(t, []byte(testMessage))
	if want := []string{"From", "To", "Subject", "MIME-Version", "Content-Type"}; !slices.Equal(m.Keys, want) {
		t.Errorf("Keys %q, want %q", m.Keys, want)
	}
	if want := "mixed(alternative(text/plain,related(text/html,image/png)),application/pdf)"; m.Tree != want {
		t.Errorf("Tree %s, want %s", m.Tree, want)
	}
	wantPaths := []string{
		"multipart/mixed>multipart/alternative>text/plain",
		"multipart/mixed>multipart/alternative>multipart/related>text/html",
		"multipart/mixed>multipart/alternative>multipart/related>image/png",
		"multipart/mixed>application/pdf",
	}
	if got := m.Paths(); !slices.Equal(got, wantPaths) {
		t.Errorf("Paths %q, want %q", got, wantPaths)
	}
	var multi []string
	for _, p := range m.Multiparts {
		if p.Body != nil || p.Raw != nil {
			t.Errorf("multipart %s has a body", p.Path)
		}
		multi = append(multi, p.Path)
	}
	if want := []string{"multipart/mixed", "multipart/mixed>multipart/alternative", "multipart/mixed>multipart/alternative>multipart/related"}; !slices.Equal(multi, want) {
		t.Errorf("Multiparts %q, want %q", multi, want)
	}
	if got := m.Multiparts[2].Header.Get("Content-Type"); !strings.Contains(got, `type="text/html"`) {
		t.Errorf("related Content-Type %q", got)
	}
	for _, tc := range []struct {
		path, typ, body, raw string
	}{
		{wantPaths[0], "text/plain", "Café softbreak", "Caf=C3=A9 soft=\r\nbreak"},
		{wantPaths[1], "text/html", "<p>a=b</p>", "<p>a=3Db</p>"},
		{wantPaths[2], "image/png", "\x89PNG", "iVBO\r\nRw=="},
		{wantPaths[3], "application/pdf", "%PDF-", "JVBERi0="},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			p := m.Find(t, tc.path)
			if p.Type() != tc.typ {
				t.Errorf("Type() = %q, want %q", p.Type(), tc.typ)
			}
			if string(p.Body) != tc.body || string(p.Raw) != tc.raw {
				t.Errorf("body %q raw %q; want %q and %q", p.Body, p.Raw, tc.body, tc.raw)
			}
		})
	}
	if got := m.Find(t, wantPaths[2]).Header.Get("Content-ID"); got != "<logo@x>" {
		t.Errorf("image Content-ID %q", got)
	}
	if got := DecodeHeader(t, m.Header.Get("Subject")); got != "Café for you" {
		t.Errorf("Subject %q", got)
	}
	if to, err := m.Header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "ann@example.org" {
		t.Errorf("To %v (%v)", to, err)
	}
}

func TestParseSinglePart(t *testing.T) {
	data := crlf("Content-Type: text/plain; charset=UTF-8", "Content-Transfer-Encoding: base64", "", "aGk=")
	m := Parse(t, []byte(data))
	if m.Tree != "text/plain" || len(m.Multiparts) != 0 || !slices.Equal(m.Paths(), []string{"text/plain"}) {
		t.Fatalf("Tree %s, Multiparts %d, Paths %q", m.Tree, len(m.Multiparts), m.Paths())
	}
	if p := m.Parts[0]; string(p.Body) != "hi" || p.Type() != "text/plain" {
		t.Errorf("body %q, type %q", p.Body, p.Type())
	}
}

// TestReadStrict: Read takes what any reader takes (7bit, no
// Content-Type), Strict refuses what postroom never writes.
func TestReadStrict(t *testing.T) {
	plain := []byte(crlf("Subject: hi", "", "hello"))
	m, err := Read(plain)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tree != "text/plain" || string(m.Parts[0].Body) != "hello\r\n" {
		t.Errorf("Tree %s, body %q", m.Tree, m.Parts[0].Body)
	}
	if _, err := Strict(plain); err == nil {
		t.Error("Strict took a 7bit leaf")
	}
	if _, err := Strict([]byte("Subject: hi\r\n\r\nline\n")); !errors.Is(err, ErrBareCRLF) {
		t.Errorf("Strict of a bare LF: %v, want ErrBareCRLF", err)
	}
	if _, err := Read([]byte(crlf("Content-Type: multipart/mixed; boundary=b", "", "--b", "Content-Type: text/plain", "", "x"))); err == nil {
		t.Error("Read took a multipart that does not end")
	}
	if _, err := Strict([]byte(testMessage)); err != nil {
		t.Errorf("Strict(testMessage): %v", err)
	}
}
