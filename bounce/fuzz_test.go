package bounce

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/postroom/postroom/internal/sendid"
)

// FuzzParse parses any bytes and checks what every Report must be: a
// known type; each recipient with one of the five actions, a documented
// class, a well-formed status; Hard only for a failed recipient with a
// 5.x.x status and a hard class, and never in a report that is not a
// bounce; valid UTF-8 throughout; and no more read than the bound.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"unit", "corpus"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.eml"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("Content-Type: multipart/report; boundary=x\n\n--x\nContent-Type: message/delivery-status\n\nFinal-Recipient: rfc822; a@b.c\nAction: failed\nStatus: 5.1.1\n--x--\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cr := &countingReader{r: bytes.NewReader(b)}
		rep, err := Parse(cr)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if cr.n > maxRead {
			t.Fatalf("read %d bytes, more than the bound %d", cr.n, maxRead)
		}
		checkInvariants(t, rep)
	})
}

// checkInvariants fails t when rep breaks a rule every Report keeps.
func checkInvariants(t *testing.T, rep *Report) {
	t.Helper()
	switch rep.Type {
	case TypeBounce, TypeDelay, TypeComplaint, TypeAutoReply, TypeDeliveryReport, TypeNone:
	default:
		t.Fatalf("Type %q", rep.Type)
	}
	if rep.SendID != "" && sendid.Normalize(rep.SendID) != rep.SendID {
		t.Fatalf("SendID %q", rep.SendID)
	}
	failed := false
	for _, r := range rep.Recipients {
		switch r.Action {
		case ActionFailed, ActionDelayed, ActionDelivered, ActionRelayed, ActionExpanded:
		default:
			t.Fatalf("recipient %q: Action %q", r.Address, r.Action)
		}
		if !slices.Contains(classes, r.Class) {
			t.Fatalf("recipient %q: Class %q", r.Address, r.Class)
		}
		if r.Status != "" && findStatus(r.Status) != r.Status {
			t.Fatalf("recipient %q: Status %q", r.Address, r.Status)
		}
		if r.Hard && (r.Action != ActionFailed || !strings.HasPrefix(r.Status, "5.") || !isHardClass(r.Class)) {
			t.Fatalf("recipient %q: Hard with action %q status %q class %q", r.Address, r.Action, r.Status, r.Class)
		}
		if r.Hard && rep.Type != TypeBounce {
			t.Fatalf("a Hard recipient in a %q report", rep.Type)
		}
		if r.Address == "" || !strings.Contains(r.Address, "@") {
			t.Fatalf("recipient address %q", r.Address)
		}
		failed = failed || r.Action == ActionFailed
		for _, s := range []string{r.Address, r.Diagnostic, r.RemoteMTA} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q", s)
			}
		}
	}
	if failed != (rep.Type == TypeBounce) && len(rep.Recipients) > 0 && rep.Type != TypeComplaint {
		t.Fatalf("Type %q with a failed recipient: %v", rep.Type, failed)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
