package main

import (
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
		var p preview
		c.jsonOf(t, &p, "preview", "-strict", "testdata/receipt.json")
		if b := p.Recipients[1]; b.Status != "invalid" || b.Code != "missing-param" {
			t.Errorf("bob under -strict: %+v", b)
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
	c.jsonOf(t, &p, "send", "testdata/receipt.json", "--dry-run")
	if p.Refused != 1 || len(p.Recipients) != 3 {
		t.Errorf("dry run: %+v, want cy refused", p)
	}
	out := c.ok(t, "send", "-dry-run", "-strict", "testdata/receipt.json")
	if !strings.Contains(out, "3 recipients, 2 would be refused; nothing was sent") {
		t.Errorf("dry run -strict printed:\n%s", out)
	}
	r := c.run(t, "send", "testdata/receipt.json")
	if r.code != 2 || !strings.Contains(r.stderr, "sends no mail") {
		t.Errorf("send without -dry-run: %+v", r)
	}
	var ue *usageError
	if !errors.As(runSend(t.Context(), &env{stdout: new(strings.Builder), stderr: new(strings.Builder), getenv: func(string) string { return "" }}, []string{"testdata/receipt.json"}), &ue) {
		t.Error("send without -dry-run is not a usage error")
	}
}
