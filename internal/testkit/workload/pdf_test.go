package workload

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

var (
	rStartXref = regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`)
	rXrefEntry = regexp.MustCompile(`(\d{10}) (\d{5}) ([nf]) \n`)
	rStream    = regexp.MustCompile(`<< /Length (\d+) >>\nstream\n`)
)

// checkPDF checks the structure a reader relies on: the header, startxref
// pointing at the xref table, every in-use entry of the table pointing at
// its object, and the content stream's /Length.
func checkPDF(t *testing.T, pdf []byte) {
	t.Helper()
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.4\n")) {
		t.Fatalf("no PDF header: %.20q", pdf)
	}
	m := rStartXref.FindSubmatch(pdf)
	if m == nil {
		t.Fatalf("no startxref at the end: %q", pdf[max(0, len(pdf)-40):])
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if xref >= len(pdf) || !bytes.HasPrefix(pdf[xref:], []byte("xref\n0 6\n")) {
		t.Fatalf("startxref %d does not point at a 6-entry xref table", xref)
	}
	entries := rXrefEntry.FindAllSubmatch(pdf[xref:], -1)
	if len(entries) != 6 {
		t.Fatalf("%d xref entries, want 6", len(entries))
	}
	for obj, e := range entries[1:] {
		off, _ := strconv.Atoi(string(e[1]))
		want := fmt.Sprintf("%d 0 obj\n", obj+1)
		if string(e[3]) != "n" || off >= len(pdf) || !bytes.HasPrefix(pdf[off:], []byte(want)) {
			t.Errorf("xref entry %d: offset %d does not start %q", obj+1, off, want)
		}
	}
	s := rStream.FindSubmatchIndex(pdf)
	if s == nil {
		t.Fatal("no content stream")
	}
	n, _ := strconv.Atoi(string(pdf[s[2]:s[3]]))
	if end := s[1] + n; end > len(pdf) || !bytes.HasPrefix(pdf[end:], []byte("endstream\n")) {
		t.Errorf("the stream's /Length %d does not end at endstream", n)
	}
}

func TestInvoicePDF(t *testing.T) {
	// Sizes around the points where the stream length and the offsets gain
	// a digit.
	for _, size := range []int{800, 1000, 1100, 10000, 10080, AttachmentSize} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			pdf, err := invoicePDF(size)
			if err != nil {
				t.Fatal(err)
			}
			if len(pdf) != size {
				t.Fatalf("%d bytes, want %d", len(pdf), size)
			}
			checkPDF(t, pdf)
			if !bytes.Contains(pdf, []byte("(Example Shop - Invoice) Tj")) {
				t.Error("the page does not show the invoice")
			}
		})
	}
	if pdf, err := invoicePDF(100); err == nil {
		t.Errorf("invoicePDF(100) = %d bytes, want an error", len(pdf))
	}
}
