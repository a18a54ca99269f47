package hbsjs

import "testing"

// TestRender checks the round trip through node: an output, an escaped
// value, and a template handlebars.js refuses.
func TestRender(t *testing.T) {
	r := Start(t)
	for _, tc := range []struct {
		template string
		data     any
		want     Result
	}{
		{"Hi {{name}}!", map[string]any{"name": "<Ann>"}, Result{Out: "Hi &lt;Ann&gt;!"}},
		{"{{x}}", map[string]any{"x": 1e21}, Result{Out: "1e+21"}},
		{"{{log x}}", map[string]any{"x": 1}, Result{Out: ""}},
	} {
		got, err := r.Render(tc.template, tc.data)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Render(%q) = %+v, want %+v", tc.template, got, tc.want)
		}
	}
	got, err := r.Render("{{#if}}", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Err == "" {
		t.Errorf("Render of an unclosed block = %+v, want an error", got)
	}
}
