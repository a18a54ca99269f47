package postroom_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

// workloadPath is the shared benchmark workload, beside the repository.
var workloadPath = filepath.Join("..", "shared", "workloads", "transactional.json")

// workloadCall returns the shared workload's call with n recipients, built
// as the workload's README says: recipient i takes sample i mod 16's name
// and params and the address user%06d@example.org.
func workloadCall(t testing.TB, n int) *postroom.Call {
	t.Helper()
	b, err := os.ReadFile(workloadPath)
	if err != nil {
		t.Fatalf("reading the workload: %v", err)
	}
	var call postroom.Call
	if err := json.Unmarshal(b, &call); err != nil {
		t.Fatalf("decoding the workload: %v", err)
	}
	samples := call.Recipients
	call.Recipients = make([]postroom.Recipient, n)
	for i := range call.Recipients {
		s := samples[i%len(samples)]
		call.Recipients[i] = postroom.Recipient{Email: fmt.Sprintf("user%06d@example.org", i), Name: s.Name, Params: s.Params}
	}
	return &call
}

// part is one leaf of a parsed message.
type part struct {
	path   string // content types from the root, joined by ">"
	header mail.Header
	body   []byte // decoded
}

// parsed is a message read back with net/mail and mime/multipart.
type parsed struct {
	header mail.Header
	keys   []string // header field names in order
	parts  []part
}

// parseMessage reads data back as a reader of mail would, and checks the
// line rules on the way: CRLF only, no line over 998 octets, 7-bit.
func parseMessage(t testing.TB, data []byte) *parsed {
	t.Helper()
	checkLines(t, data)
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("net/mail cannot read the message: %v", err)
	}
	p := &parsed{header: msg.Header}
	head := data[:bytes.Index(data, []byte("\r\n\r\n"))+2]
	for _, line := range strings.SplitAfter(string(head), "\r\n") {
		if line != "" && line[0] != ' ' && line[0] != '\t' {
			p.keys = append(p.keys, line[:strings.IndexByte(line, ':')])
		}
	}
	p.walk(t, "", msg.Header, msg.Body)
	return p
}

func (p *parsed) walk(t testing.TB, path string, h mail.Header, body io.Reader) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		t.Fatalf("%s: Content-Type %q: %v", path, h.Get("Content-Type"), err)
	}
	if path != "" {
		path += ">"
	}
	path += mt
	if strings.HasPrefix(mt, "multipart/") {
		r := multipart.NewReader(body, params["boundary"])
		for {
			pt, err := r.NextRawPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			p.walk(t, path, mail.Header(pt.Header), pt)
		}
	}
	var dec io.Reader
	switch cte := strings.ToLower(h.Get("Content-Transfer-Encoding")); cte {
	case "quoted-printable":
		dec = quotedprintable.NewReader(body)
	case "base64":
		dec = base64.NewDecoder(base64.StdEncoding, body)
	default:
		t.Fatalf("%s: Content-Transfer-Encoding %q, want quoted-printable or base64", path, cte)
	}
	b, err := io.ReadAll(dec)
	if err != nil {
		t.Fatalf("%s: decoding the body: %v", path, err)
	}
	p.parts = append(p.parts, part{path: path, header: h, body: b})
}

// find returns the part whose path is path, or fails.
func (p *parsed) find(t testing.TB, path string) part {
	t.Helper()
	for _, pt := range p.parts {
		if pt.path == path {
			return pt
		}
	}
	t.Fatalf("no part %s in %v", path, p.paths())
	return part{}
}

func (p *parsed) paths() []string {
	var s []string
	for _, pt := range p.parts {
		s = append(s, pt.path)
	}
	return s
}

// decodeHeader decodes RFC 2047 words in a header value.
func decodeHeader(t testing.TB, v string) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(v)
	if err != nil {
		t.Fatalf("decoding header %q: %v", v, err)
	}
	return s
}

func checkLines(t testing.TB, data []byte) {
	t.Helper()
	for i, line := range bytes.SplitAfter(data, []byte("\r\n")) {
		if len(line) == 0 {
			continue
		}
		content := bytes.TrimSuffix(line, []byte("\r\n"))
		if len(content) == len(line) && i != len(bytes.SplitAfter(data, []byte("\r\n")))-1 {
			t.Fatalf("line %d does not end in CRLF", i+1)
		}
		if bytes.ContainsAny(content, "\r\n") {
			t.Fatalf("line %d has a bare CR or LF: %q", i+1, content)
		}
		if len(content) > 998 {
			t.Fatalf("line %d has %d octets, over 998", i+1, len(content))
		}
		for _, c := range content {
			if c >= 0x80 {
				t.Fatalf("line %d is not 7-bit: %q", i+1, content)
			}
		}
	}
	if !bytes.HasSuffix(data, []byte("\r\n")) {
		t.Fatalf("message does not end in CRLF")
	}
}
