package postroom

import (
	"strings"
	"testing"
)

func TestFindCIDRefs(t *testing.T) {
	tests := []struct {
		name    string
		html    string
		static  []string
		dynamic bool
	}{
		{"none", `<p>hi</p>`, nil, false},
		{"two", `<img src="cid:logo@x"><img src='cid:banner.png'>`, []string{"logo@x", "banner.png"}, false},
		{"case-insensitive scheme", `<img src="CID:logo">`, []string{"logo"}, false},
		{"css url", `background:url(cid:bg)`, []string{"bg"}, false},
		{"placeholder", `<img src="cid:{{logo}}">`, nil, true},
		{"placeholder suffix", `<img src="cid:logo-{{n}}">`, nil, true},
		{"bare cid: text", `write cid: then`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs := findCIDRefs(tt.html)
			if len(refs.static) != len(tt.static) || refs.dynamic != tt.dynamic {
				t.Fatalf("findCIDRefs = %v, dynamic %v; want %v, dynamic %v", refs.static, refs.dynamic, tt.static, tt.dynamic)
			}
			for _, c := range tt.static {
				if !refs.static[c] {
					t.Fatalf("missing %q in %v", c, refs.static)
				}
			}
		})
	}
}

// TestIndexFold checks indexFold against trying every position.
func TestIndexFold(t *testing.T) {
	naive := func(s, needle string) int {
		for i := 0; i+len(needle) <= len(s); i++ {
			if strings.EqualFold(s[i:i+len(needle)], needle) {
				return i
			}
		}
		return -1
	}
	inputs := []string{"", ":", "cid:", "CID:x", "xcId:", "ci:d:cid:", "c:i:d:", "cid", "<img src=\"Cid:logo\">", "ciD\u212a:cid:", "::::cid:", strings.Repeat("cidx", 50) + "cid:"}
	for _, s := range inputs {
		for _, needle := range []string{"cid:", "cid", ":", "src="} {
			if got, want := indexFold(s, needle), naive(s, needle); got != want {
				t.Errorf("indexFold(%q, %q) = %d, want %d", s, needle, got, want)
			}
		}
	}
}
