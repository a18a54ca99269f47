package postroom_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/mailtest"
	"github.com/postroom/postroom/internal/testenv"
	"github.com/postroom/postroom/transport"
)

// TestGeneratedTextPart checks that a call with html and no text gets a
// text/plain alternative made from each recipient's rendered html, and
// that Options.HTMLOnly turns it off.
func TestGeneratedTextPart(t *testing.T) {
	call := smallCall("ann@example.net", "bob@example.org")
	call.Recipients[1].Params = map[string]any{"name": "Bob"}
	call.Message.Text = ""
	call.Message.HTML = `<html><head><style>p{color:red}</style></head><body><h1>Hi {{name}}</h1><p>Your <a href="https://shop.example.com/o/{{name}}">order</a> &amp; more.</p></body></html>`
	for _, tc := range []struct {
		name     string
		htmlOnly bool
		tree     string
	}{
		{"generated", false, "multipart/alternative>text/plain multipart/alternative>text/html"},
		{"HTMLOnly", true, "text/html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := transport.NewMemory()
			results, err := newMailer(t, mem, postroom.Options{HTMLOnly: tc.htmlOnly}).Send(t.Context(), call)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range results {
				env, ok := mem.Envelope(r.SendID)
				if !ok {
					t.Fatalf("recipient %d: %+v", i, r)
				}
				msg := mailtest.Parse(t, env.Data)
				if got := strings.Join(msg.Paths(), " "); got != tc.tree {
					t.Fatalf("tree %q, want %q", got, tc.tree)
				}
				if tc.htmlOnly {
					continue
				}
				name := []string{"Ann", "Bob"}[i]
				want := "# Hi " + name + "\r\n\r\nYour order (https://shop.example.com/o/" + name + ") & more.\r\n"
				if got := string(msg.Parts[0].Body); got != want {
					t.Errorf("recipient %d: text %q, want %q", i, got, want)
				}
			}
		})
	}
}

// TestGeneratedTextNotWhenTextGiven checks that a given text part is
// kept as it is.
func TestGeneratedTextNotWhenTextGiven(t *testing.T) {
	_, msg := sendOne(t, smallCall("ann@example.net"))
	if got := string(msg.Parts[0].Body); got != "Hi Ann!" {
		t.Errorf("text %q, want the call's", got)
	}
}

// structuralRules are the SpamAssassin rules about a message's structure
// and headers, which no message postroom builds may fire, whatever its
// content. docs/DKIM.md lists them.
var structuralRules = []string{
	"MIME_HTML_ONLY", "MIME_HTML_MOSTLY", "MIME_HTML_ONLY_MULTI", "HTML_MIME_NO_HTML_TAG",
	"MPART_ALT_DIFF", "MPART_ALT_DIFF_COUNT", "MIME_QP_LONG_LINE", "MIME_BASE64_TEXT",
	"MIME_BASE64_BLANKS", "MIME_BOUND_DIGITS_15", "MIME_HEADER_CTYPE_ONLY", "MIME_NO_TEXT",
	"MIME_CHARSET_FARAWAY", "MISSING_MIME_HB_SEP", "MISSING_MID", "MISSING_DATE",
	"MISSING_HEADERS", "MISSING_FROM", "MISSING_SUBJECT", "INVALID_DATE", "INVALID_MSGID",
	"DATE_IN_FUTURE_03_06", "DATE_IN_FUTURE_06_12", "DATE_IN_FUTURE_12_24", "DATE_IN_FUTURE_24_48",
	"DATE_IN_FUTURE_48_96", "DATE_IN_FUTURE_96_Q", "DATE_IN_PAST_03_06", "DATE_IN_PAST_06_12",
	"DATE_IN_PAST_12_24", "DATE_IN_PAST_24_48", "DATE_IN_PAST_96_XX", "FROM_EXCESS_BASE64",
	"FROM_ADDR_WS", "SUBJ_ILLEGAL_CHARS", "BASE64_LENGTH_78_79", "BASE64_LENGTH_79_INF",
	"TO_NO_BRKTS_HTML_ONLY", "TO_NO_BRKTS_MSFT", "TO_MALFORMED", "HEADER_SPAM",
	"MSGID_SHORT", "MSGID_NOFQDN1", "MSGID_MULTIPLE_AT", "MALFORMED_FREEMAIL",
}

// spamStatus finds each X-Spam-Status field; unfoldSA joins its lines,
// which SpamAssassin folds after a comma of the tests list; messageID
// finds the next Message-ID field.
var (
	spamStatus = regexp.MustCompile(`(?m)^X-Spam-Status: .*(?:\n[ \t].*)*`)
	unfoldSA   = regexp.MustCompile(`,\r?\n[ \t]+`)
	messageID  = regexp.MustCompile(`(?m)^Message-ID:\s*(<[^>]*>)`)
)

// TestSpamAssassinStructural scores every message of the deliverability
// corpus, unsigned and DKIM-signed, with SpamAssassin's local rules (no
// network tests) and fails if any structural rule fires.
func TestSpamAssassinStructural(t *testing.T) {
	testenv.Need(t, "spamassassin", "/usr/bin/spamassassin", "-V")
	signers, _ := testSigners(t)
	msgs := sendCorpus(t, postroom.Options{})
	for _, m := range sendCorpus(t, postroom.Options{DKIM: signers}) {
		m.name += "-signed"
		msgs = append(msgs, m)
	}
	// One mbox, one spamassassin run: its start-up (compiling the rules)
	// is most of its time.
	var box bytes.Buffer
	for _, m := range msgs {
		box.WriteString("From MAILER-DAEMON Mon Nov 23 10:00:00 2026\n")
		for line := range strings.Lines(string(m.env.Data)) {
			if strings.HasPrefix(line, "From ") {
				box.WriteByte('>') // mboxrd quoting
			}
			box.WriteString(line)
		}
		box.WriteString("\n")
	}
	home := t.TempDir()
	path := filepath.Join(home, "corpus.mbox")
	if err := os.WriteFile(path, box.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "/usr/bin/spamassassin", "-L", "-t", "--mbox", path)
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("spamassassin: %v", err)
	}
	// Each message's X-Spam-Status comes before its own header fields:
	// the Message-ID after it says whose it is.
	names := map[string]string{}
	for _, m := range msgs {
		names[mailtest.Parse(t, m.env.Data).Header.Get("Message-ID")] = m.name
	}
	text := string(out)
	locs := spamStatus.FindAllStringIndex(text, -1)
	if len(locs) != len(msgs) {
		t.Fatalf("spamassassin scored %d messages, want %d", len(locs), len(msgs))
	}
	seen := map[string]bool{}
	for _, loc := range locs {
		st := unfoldSA.ReplaceAllString(text[loc[0]:loc[1]], ",")
		st = strings.Join(strings.Fields(st), " ")
		_, tests, _ := strings.Cut(st, "tests=")
		tests, _, _ = strings.Cut(tests, " ")
		id := messageID.FindStringSubmatch(text[loc[1]:])
		if id == nil || names[id[1]] == "" {
			t.Fatalf("no known Message-ID after %q", st)
		}
		name := names[id[1]]
		seen[name] = true
		t.Logf("%s: %s", name, tests)
		for r := range strings.SplitSeq(tests, ",") {
			if slices.Contains(structuralRules, r) {
				t.Errorf("%s: structural rule %s fired (all: %s)", name, r, tests)
			}
		}
	}
	if len(seen) != len(msgs) {
		t.Errorf("spamassassin scored %d of the %d messages", len(seen), len(msgs))
	}
}
