package workload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"strings"
	"testing"
)

// TestFixtureIsGenerated checks that the committed workload is Generate's
// output, byte for byte.
func TestFixtureIsGenerated(t *testing.T) {
	got, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if want := Read(t); !bytes.Equal(got, want) {
		t.Fatalf("%s (%d bytes) is not Generate's output (%d bytes): run go generate ./internal/testkit/workload and commit the result", FromRoot, len(want), len(got))
	}
	again, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, again) {
		t.Error("two runs of Generate differ")
	}
}

// generated is the workload as Generate writes it, decoded.
type generated struct {
	GlobalParams map[string]any `json:"global_params"`
	Message      struct {
		Subject string `json:"subject"`
		HTML    string `json:"html"`
		Text    string `json:"text"`
		Headers []struct {
			Name, Value string
		} `json:"headers"`
		Images []struct {
			Name        string `json:"name"`
			CID         string `json:"cid"`
			ContentType string `json:"content_type"`
			Content     string `json:"content"`
		} `json:"images"`
		Attachments []struct {
			Name        string `json:"name"`
			ContentType string `json:"content_type"`
			Content     string `json:"content"`
		} `json:"attachments"`
	} `json:"message"`
	Recipients []struct {
		Email  string         `json:"email"`
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
	} `json:"recipients"`
}

// TestGenerateShape checks Generate's output against the workload's
// description: the templates' placeholders and blocks, the files and their
// sizes, the params, and sample values that need escaping or are not ASCII.
func TestGenerateShape(t *testing.T) {
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	var w generated
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	m := w.Message
	for _, tc := range []struct {
		name         string
		src          string
		mustaches    int
		minLen, maxN int
	}{
		{"html", m.HTML, 20, 7500, 9000},
		{"text", m.Text, 8, 1800, 2200},
		{"subject", m.Subject, 2, 10, 100},
	} {
		if n := strings.Count(tc.src, "{{"); n != tc.mustaches {
			t.Errorf("%s: %d mustaches, want %d", tc.name, n, tc.mustaches)
		}
		if len(tc.src) < tc.minLen || len(tc.src) > tc.maxN {
			t.Errorf("%s: %d bytes, want %d to %d", tc.name, len(tc.src), tc.minLen, tc.maxN)
		}
	}
	for _, block := range []string{"{{#if vip}}", "{{else}}", "{{/if}}", "{{#each items}}", "{{/each}}", `href="{{site_url}}/orders/{{order_id}}`} {
		if !strings.Contains(m.HTML, block) {
			t.Errorf("the html has no %s", block)
		}
	}
	if len(m.Headers) != 3 {
		t.Errorf("%d headers, want 3", len(m.Headers))
	}

	if len(m.Images) != 2 {
		t.Fatalf("%d images, want 2", len(m.Images))
	}
	for i, cid := range []string{"logo@anchors", "banner@anchors"} {
		img := m.Images[i]
		if img.CID != cid || img.ContentType != "image/png" || !strings.Contains(m.HTML, `src="cid:`+cid+`"`) {
			t.Errorf("image %d: cid %q, type %q, or the html does not show it", i, img.CID, img.ContentType)
		}
		data := decode64(t, img.Content)
		if len(data) != ImageSize {
			t.Errorf("image %d: %d bytes, want %d", i, len(data), ImageSize)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("image %d: %v", i, err)
		}
	}
	if len(m.Attachments) != 1 || m.Attachments[0].ContentType != "application/pdf" {
		t.Fatalf("%d attachments, want one PDF", len(m.Attachments))
	}
	pdf := decode64(t, m.Attachments[0].Content)
	if len(pdf) != AttachmentSize {
		t.Errorf("the pdf has %d bytes, want %d", len(pdf), AttachmentSize)
	}
	checkPDF(t, pdf)

	if len(w.GlobalParams) != 5 {
		t.Errorf("%d global params, want 5", len(w.GlobalParams))
	}
	if len(w.Recipients) != Samples {
		t.Fatalf("%d samples, want %d", len(w.Recipients), Samples)
	}
	var all strings.Builder
	for i, r := range w.Recipients {
		if r.Email != Address(i) || len(r.Params) != 5 {
			t.Errorf("sample %d: %s with %d params, want %s with 5", i, r.Email, len(r.Params), Address(i))
		}
		items, _ := r.Params["items"].([]any)
		if len(items) != 3 {
			t.Errorf("sample %d: %d items, want 3", i, len(items))
		}
		fmt.Fprint(&all, r)
	}
	for _, v := range []string{"O'Brien", "Ana & Luis", "<Pro>", `"Slim"`, "Zoë", "Mårten"} {
		if !strings.Contains(all.String(), v) {
			t.Errorf("no sample has %s", v)
		}
	}
}

func decode64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
