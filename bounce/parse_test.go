package bounce

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// want is the expected outcome of one test message: its type and, per
// recipient in order, "address action status hard class".
type want struct {
	typ    Type
	sendID string
	recips []string
}

var unitCases = map[string]want{
	"postfix-dsn": {TypeBounce, "0123456789abcdef0123456789abcdef", []string{
		"gone@example.net failed 5.1.1 true user-unknown",
		"full@example.net failed 4.2.2 false mailbox-full",
	}},
	"qmail": {TypeBounce, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", []string{
		"nobody@example.org failed 5.1.1 true user-unknown",
		"blocked@example.net failed 5.7.1 false spam-blocked",
	}},
	"exim": {TypeBounce, "", []string{"someone@example.net failed 5.2.1 true mailbox-disabled"}},
	"sendmail": {TypeBounce, "cccccccccccccccccccccccccccccccc", []string{
		"nosuch@example.org failed 5.1.1 true user-unknown",
	}},
	"exchange":   {TypeBounce, "", []string{"pat@corp.example.net failed 5.1.10 true user-unknown"}},
	"gmail-spam": {TypeBounce, "", []string{"reader@example.org failed 5.7.1 false spam-blocked"}},
	"global-dsn": {TypeBounce, "dddddddddddddddddddddddddddddddd", []string{"名前@example.jp failed 5.1.1 true user-unknown"}},
	"delay-dsn":  {TypeDelay, "", []string{"slow@example.net delayed 4.4.1 false network"}},
	"delivered":  {TypeDeliveryReport, "", []string{"happy@example.net relayed 2.0.0 false delivered"}},
	"thin-dsn":   {TypeBounce, "", []string{"quota@example.org failed 5.2.2 false mailbox-full"}},
	"arf":        {TypeComplaint, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", []string{"reader@example.net delivered  false complaint"}},
	"autoreply":  {TypeAutoReply, "", []string{"jane@example.net delivered  false auto-reply"}},
	"plain":      {TypeNone, "", nil},
}

// TestParseFormats reads one message of each format from testdata/unit.
func TestParseFormats(t *testing.T) {
	for name, w := range unitCases {
		t.Run(name, func(t *testing.T) {
			rep := parseFile(t, filepath.Join("testdata", "unit", name+".eml"))
			if rep.Type != w.typ {
				t.Errorf("Type = %q, want %q", rep.Type, w.typ)
			}
			if rep.SendID != w.sendID {
				t.Errorf("SendID = %q, want %q", rep.SendID, w.sendID)
			}
			var got []string
			for _, r := range rep.Recipients {
				got = append(got, strings.Join([]string{r.Address, r.Action, r.Status, boolString(r.Hard), r.Class}, " "))
			}
			if strings.Join(got, "\n") != strings.Join(w.recips, "\n") {
				t.Errorf("recipients:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(w.recips, "\n"))
			}
			checkInvariants(t, rep)
		})
	}
}

// TestParseThinDSNDiagnostic: a DSN without Diagnostic-Code takes the
// remote reply from its human-readable part.
func TestParseThinDSNDiagnostic(t *testing.T) {
	rep := parseFile(t, filepath.Join("testdata", "unit", "thin-dsn.eml"))
	if len(rep.Recipients) != 1 || !strings.Contains(rep.Recipients[0].Diagnostic, "552 5.2.2") {
		t.Fatalf("diagnostic not taken from the text: %+v", rep.Recipients)
	}
}

// TestParseCRLF: the same messages with CRLF line ends give the same
// reports.
func TestParseCRLF(t *testing.T) {
	for name := range unitCases {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "unit", name+".eml"))
			if err != nil {
				t.Fatal(err)
			}
			lf, err := Parse(strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			crlf, err := Parse(strings.NewReader(strings.ReplaceAll(string(b), "\n", "\r\n")))
			if err != nil {
				t.Fatal(err)
			}
			if lf.Type != crlf.Type || len(lf.Recipients) != len(crlf.Recipients) {
				t.Fatalf("LF %v %d recipients, CRLF %v %d", lf.Type, len(lf.Recipients), crlf.Type, len(crlf.Recipients))
			}
			for i := range lf.Recipients {
				if lf.Recipients[i] != crlf.Recipients[i] {
					t.Errorf("recipient %d: LF %+v, CRLF %+v", i, lf.Recipients[i], crlf.Recipients[i])
				}
			}
		})
	}
}

// TestParseOneByteReads: a reader that gives one byte at a time changes
// nothing.
func TestParseOneByteReads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "unit", "postfix-dsn.eml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Parse(iotest.OneByteReader(strings.NewReader(string(b))))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeBounce || len(rep.Recipients) != 2 || !rep.Recipients[0].Hard {
		t.Fatalf("got %+v", rep)
	}
}

// TestParseErrors: a nil reader and a failing reader are errors, the
// reader's error wrapped.
func TestParseErrors(t *testing.T) {
	if _, err := Parse(nil); !errors.Is(err, ErrNilReader) {
		t.Errorf("Parse(nil) = %v, want ErrNilReader", err)
	}
	boom := errors.New("boom")
	_, err := Parse(iotest.ErrReader(boom))
	if !errors.Is(err, boom) {
		t.Errorf("Parse(failing reader) = %v, want it to wrap the reader's error", err)
	}
}

// TestForgedNamedAddress: a message that is no bounce but names an
// address and an SMTP reply reports nobody.
func TestForgedNamedAddress(t *testing.T) {
	msg := "From: someone@example.net\nTo: support@example.com\nSubject: hello\n\n" +
		"<victim@example.org>: 550 5.1.1 User unknown\n"
	rep, err := Parse(strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeNone || len(rep.Recipients) != 0 {
		t.Fatalf("got %+v, want none", rep)
	}
}

func parseFile(t *testing.T, path string) *Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	return rep
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestParseEncodedReturnedMessage: a returned message sent in base64
// still gives its headers (the send id in its Return-Path).
func TestParseEncodedReturnedMessage(t *testing.T) {
	orig := "Return-Path: <bounces+fedcba9876543210fedcba9876543210@bounce.example.com>\r\nTo: x@example.net\r\n\r\nHello\r\n"
	msg := "From: MAILER-DAEMON@mx.example.net\nSubject: Undelivered Mail Returned to Sender\n" +
		"Content-Type: multipart/report; report-type=delivery-status; boundary=b\n\n" +
		"--b\nContent-Type: message/delivery-status\n\nFinal-Recipient: rfc822; x@example.net\nAction: failed\nStatus: 5.1.1\n\n" +
		"--b\nContent-Type: message/rfc822\nContent-Transfer-Encoding: base64\n\n" +
		base64.StdEncoding.EncodeToString([]byte(orig)) + "\n--b--\n"
	rep, err := Parse(strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	if rep.SendID != "fedcba9876543210fedcba9876543210" {
		t.Fatalf("SendID %q", rep.SendID)
	}
}

// TestParseSESNotification: Amazon SES notifications mailed as JSON,
// bare and in an SNS envelope.
func TestParseSESNotification(t *testing.T) {
	inner := `{"notificationType":"Bounce","bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"gone@example.net","action":"failed","status":"5.1.1","diagnosticCode":"smtp; 550 5.1.1 user unknown"}],"reportingMTA":"dsn; a1.example.com"},"mail":{"messageId":"x"}}`
	quoted, _ := json.Marshal(inner)
	bodies := map[string]string{
		"bare": inner,
		"sns":  `{"Type" : "Notification", "MessageId" : "1", "Message" : ` + string(quoted) + `}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			msg := "From: no-reply@sns.example.com\nSubject: AWS Notification Message\n\n" + body + "\n"
			rep, err := Parse(strings.NewReader(msg))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Type != TypeBounce || len(rep.Recipients) != 1 || rep.Recipients[0].Address != "gone@example.net" || !rep.Recipients[0].Hard {
				t.Fatalf("got %+v", rep)
			}
		})
	}
	complaint := "Subject: AWS Notification Message\n\n" +
		`{"notificationType":"Complaint","complaint":{"complainedRecipients":[{"emailAddress":"angry@example.net"}],"complaintFeedbackType":"abuse"}}` + "\n"
	rep, err := Parse(strings.NewReader(complaint))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeComplaint || rep.FeedbackType != "abuse" || len(rep.Recipients) != 1 || rep.Recipients[0].Hard {
		t.Fatalf("complaint: got %+v", rep)
	}
}

// TestNotBounces: mail that is no bounce gives TypeNone, however much it
// looks like one: a mail system's newsletter, a person quoting a bounce.
func TestNotBounces(t *testing.T) {
	for name, msg := range map[string]string{
		"postmaster newsletter": "From: postmaster@example.net\nSubject: Maintenance on Sunday\n\n" +
			"Our mail servers will be down on Sunday. Questions: help@example.net\n",
		"quoted bounce": "From: Pat <pat@example.net>\nSubject: Re: your mail\n\n" +
			"> Hi. This is the qmail-send program at mx.example.org.\n> <pat.old@example.org>:\n> Sorry, no mailbox here by that name. (#5.1.1)\n\nWhat is this?\n",
		"forwarded bounce": "From: Pat <pat@example.net>\nSubject: Fwd: Undelivered Mail Returned to Sender\n\n" +
			"<friend@example.org>: host mx.example.org said: 550 5.1.1 User unknown\n",
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(msg))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Type != TypeNone || len(rep.Recipients) != 0 {
				t.Fatalf("got %+v, want none", rep)
			}
		})
	}
}

// TestParseLeadingTrace: trace fields (dropped as they are read) with
// continuation lines at the top of the header end nothing.
func TestParseLeadingTrace(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "unit", "postfix-dsn.eml"))
	if err != nil {
		t.Fatal(err)
	}
	msg := "Received: from mx.example.net (mx.example.net [192.0.2.1])\n\tby mx.example.com with ESMTPS id 1\n" +
		"DKIM-Signature: v=1; a=rsa-sha256;\n  d=example.net; s=x\n" + string(b)
	rep, err := Parse(strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeBounce || len(rep.Recipients) != 2 || rep.SendID == "" {
		t.Fatalf("got %+v", rep)
	}
}

// TestParseLeadingBlankLines: blank and white lines before the header
// (what a mailbox export leaves between messages) are no empty header:
// the report reads as without them.
func TestParseLeadingBlankLines(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "unit", "postfix-dsn.eml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(strings.NewReader("\n   \n\t\n" + string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != want.Type || got.Subject != want.Subject || got.SendID != want.SendID || len(got.Recipients) != len(want.Recipients) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want.Recipients {
		if got.Recipients[i] != want.Recipients[i] {
			t.Errorf("recipient %d: got %+v, want %+v", i, got.Recipients[i], want.Recipients[i])
		}
	}
}
