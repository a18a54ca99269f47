package htmltext

import (
	"strings"
	"testing"
)

// TestRelease checks that a Converter keeps its buffers from a document
// like the workload's to the next, and drops those a huge document grew.
func TestRelease(t *testing.T) {
	var cv Converter
	small := "<p class=a>x &amp; y</p><ul><li><a href='https://x.example/'>l</a></li></ul>"
	cv.Append(nil, []byte(small))
	if cap(cv.attrs) == 0 || cap(cv.textBuf) == 0 || cap(cv.c.lists) == 0 {
		t.Errorf("buffers not kept: attrs %d, text %d, lists %d", cap(cv.attrs), cap(cv.textBuf), cap(cv.c.lists))
	}
	huge := "<p" + strings.Repeat(" a", 100000) + ">" + strings.Repeat("w&amp;", 100000) +
		"<a href='" + strings.Repeat("h", 100000) + "'>" + strings.Repeat("l ", 50000) + "</a>" + strings.Repeat("<ul><li>x", 2100)
	cv.Append(nil, []byte(huge))
	for name, c := range map[string]int{
		"attrs": cap(cv.attrs), "text": cap(cv.textBuf), "href": cap(cv.hrefBuf), "link": cap(cv.c.link),
		"conv href": cap(cv.c.href), "lists": cap(cv.c.lists), "tmp": cap(cv.c.tmp),
	} {
		if c != 0 {
			t.Errorf("%s kept with capacity %d", name, c)
		}
	}
}
