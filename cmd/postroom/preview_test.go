package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// preview is receipt.json's preview as JSON.
type preview struct {
	Operation  string          `json:"operation"`
	Recipients []recipientView `json:"recipients"`
	Refused    int             `json:"refused"`
}

func TestPreview(t *testing.T) {
	var c cmd // no database: message.send needs none
	var p preview
	c.jsonOf(t, &p, "preview", "testdata/receipt.json")
	if p.Operation != "message.send" || len(p.Recipients) != 3 {
		t.Fatalf("%+v", p)
	}
	ann, bob, cy := p.Recipients[0], p.Recipients[1], p.Recipients[2]
	if ann.Subject != "Your order 1001" || ann.Status != "sent" || len(ann.Missing) != 0 {
		t.Errorf("ann: %+v", ann)
	}
	if bob.Subject != "Your order " || len(bob.Missing) != 1 || bob.Missing[0] != "order" {
		t.Errorf("bob: %+v, want order missing", bob)
	}
	if cy.Status != "invalid" || cy.Code == "" || cy.Subject != "" {
		t.Errorf("cy: %+v, want refused", cy)
	}
	out := c.ok(t, "preview", "-recipients", "1", "testdata/receipt.json")
	if !strings.Contains(out, "1 bob@example.org: ok") || !strings.Contains(out, "missing params: order") || strings.Contains(out, "ann@") {
		t.Errorf("preview -recipients 1 printed:\n%s", out)
	}

	t.Run("strict", func(t *testing.T) {
		// Refused recipients make -strict exit 1, after its output.
		r := c.run(t, "preview", "-strict", "-json", "testdata/receipt.json")
		var p preview
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatalf("%v: %+v", err, r)
		}
		if b := p.Recipients[1]; b.Status != "invalid" || b.Code != "missing-param" {
			t.Errorf("bob under -strict: %+v", b)
		}
		if r.code != 1 || r.stderr != "postroom preview: 2 of 3 recipients would be refused\n" || p.Refused != 2 {
			t.Errorf("preview -strict with 2 refused: exit %d, stderr %q, refused %d; want 1", r.code, r.stderr, p.Refused)
		}
		r = c.run(t, "preview", "-strict", "-recipients", "1", "testdata/receipt.json")
		if r.code != 1 || !strings.Contains(r.stdout, "1 bob@example.org: refused, invalid") {
			t.Errorf("preview -strict -recipients 1: %+v", r)
		}
		// None refused: 0; without -strict a refused recipient is shown, exit 0.
		c.ok(t, "preview", "-strict", "testdata/welcome.json")
		c.ok(t, "preview", "-strict", "-recipients", "0", "testdata/receipt.json")
		c.ok(t, "preview", "testdata/receipt.json")
	})
	t.Run("show", func(t *testing.T) {
		out := c.ok(t, "preview", "-show", "html", "-recipients", "1", "testdata/welcome.json")
		want := "1 bob@example.org: ok\n  subject: Welcome, Bob\n  html:\n    <p>Hello Bob,</p>\n    <p>your code is B2.</p>\n"
		if out != want {
			t.Errorf("preview -show html printed:\n%s\nwant:\n%s", out, want)
		}
		out = c.ok(t, "preview", "-show", "text", "-recipients", "0", "testdata/welcome.json")
		want = "0 ann@example.org: ok\n  subject: Welcome, Ann\n  text:\n    Hello Ann,\n    your code is A1.\n"
		if out != want {
			t.Errorf("preview -show text printed:\n%s\nwant:\n%s", out, want)
		}
		var p preview
		c.jsonOf(t, &p, "preview", "-show", "html", "testdata/welcome.json")
		if len(p.Recipients) != 2 || p.Recipients[0].HTML != "<p>Hello Ann,</p>\n<p>your code is A1.</p>" || p.Recipients[0].Text != "" {
			t.Errorf("preview -show html -json: %+v", p.Recipients)
		}
		// A refused recipient has no body.
		out = c.ok(t, "preview", "-show", "text", "-recipients", "2", "testdata/receipt.json")
		if !strings.Contains(out, "  text: (none)") {
			t.Errorf("preview -show text of a refused recipient printed:\n%s", out)
		}
		if r := c.run(t, "preview", "-show", "pdf", "testdata/welcome.json"); r.code != 2 || !strings.Contains(r.stderr, "want text or html") {
			t.Errorf("preview -show pdf: %+v", r)
		}
	})
	t.Run("workload", func(t *testing.T) {
		var p preview
		c.jsonOf(t, &p, "preview", "-recipients", "0,1", "../../testdata/workload/transactional.json")
		if len(p.Recipients) != 2 || p.Recipients[0].Subject == "" || p.Recipients[0].Status != "sent" {
			t.Errorf("%+v", p)
		}
	})
	t.Run("bad file", func(t *testing.T) {
		r := c.run(t, "preview", "testdata/bad.json")
		if r.code != 1 || !strings.Contains(r.stderr, "message.htmll") {
			t.Errorf("%+v", r)
		}
		r = c.run(t, "preview", "testdata/none.json")
		if r.code != 1 || !strings.Contains(r.stderr, "no such file") {
			t.Errorf("%+v", r)
		}
	})
}

func TestSend(t *testing.T) {
	var c cmd
	var p preview
	r := c.run(t, "send", "testdata/receipt.json", "--dry-run", "-json")
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("%v: %+v", err, r)
	}
	if p.Refused != 1 || len(p.Recipients) != 3 {
		t.Errorf("dry run: %+v, want cy refused", p)
	}
	if r.code != 1 || r.stderr != "postroom send: 1 of 3 recipients would be refused\n" {
		t.Errorf("dry run with a refused recipient: exit %d, stderr %q; want 1", r.code, r.stderr)
	}
	r = c.run(t, "send", "-dry-run", "-strict", "testdata/receipt.json")
	if r.code != 1 || !strings.Contains(r.stdout, "3 recipients, 2 would be refused; nothing was sent") {
		t.Errorf("dry run -strict: %+v", r)
	}
	if out := c.ok(t, "send", "-dry-run", "-strict", "testdata/welcome.json"); !strings.Contains(out, "2 recipients, 0 would be refused; nothing was sent") {
		t.Errorf("dry run of a call refusing none printed:\n%s", out)
	}
	r = c.run(t, "send", "testdata/receipt.json")
	if r.code != 2 || !strings.Contains(r.stderr, "sends no mail") {
		t.Errorf("send without -dry-run: %+v", r)
	}
	var ue *usageError
	if !errors.As(runSend(t.Context(), &env{stdout: new(strings.Builder), stderr: new(strings.Builder), getenv: func(string) string { return "" }}, []string{"testdata/receipt.json"}), &ue) {
		t.Error("send without -dry-run is not a usage error")
	}
}
