package bounce

import (
	"os"
	"testing"
)

func TestDbg(t *testing.T) {
	f, _ := os.Open(os.Getenv("DUMP"))
	m := walk(f)
	for _, p := range m.parts {
		t.Logf("part %s returned=%v %q", p.ctype, p.returned, string(p.body[:min(len(p.body), 300)]))
	}
	txt := humanText(m)
	t.Logf("sec=%q", section(findFamily(lowerASCII(txt)), txt, lowerASCII(txt)))
}
