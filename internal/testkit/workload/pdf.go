package workload

import (
	"fmt"
	"strings"
)

// invoicePDF returns a one-page PDF of exactly size bytes: a catalog, a
// page tree, a page showing a short invoice in Helvetica and its content
// stream, with a cross-reference table whose offsets are exact. The content
// stream ends with comment lines that pad the file to size. It fails when
// size leaves no room for the padding.
func invoicePDF(size int) ([]byte, error) {
	pad := 0
	for range 8 {
		b := buildPDF(pad)
		if len(b) == size {
			return b, nil
		}
		// The stream length and the xref offsets may change width with the
		// padding: go again with the difference.
		pad += size - len(b)
		if pad < 0 {
			break
		}
	}
	return nil, fmt.Errorf("workload: no pdf of exactly %d bytes", size)
}

// invoiceLines are the text lines the invoice page shows.
var invoiceLines = []string{
	"Example Shop - Invoice",
	"Order confirmation, see your order page for the details.",
	"Prices include VAT where applicable.",
	"Thank you for shopping with us.",
}

// buildPDF builds the PDF with pad bytes of comment lines at the end of the
// content stream.
func buildPDF(pad int) []byte {
	var content strings.Builder
	content.WriteString("BT\n/F1 18 Tf\n56 780 Td\n22 TL\n")
	for i, line := range invoiceLines {
		if i == 1 {
			content.WriteString("/F1 11 Tf\n")
		}
		fmt.Fprintf(&content, "(%s) Tj T*\n", line)
	}
	content.WriteString("ET\n")
	for pad > 0 {
		// A comment line: '%', up to 70 bytes of text, a line feed.
		n := min(pad, 72)
		if n == 1 {
			content.WriteString("\n")
			break
		}
		content.WriteString("%")
		content.Write(filler(n - 2))
		content.WriteString("\n")
		pad -= n
	}

	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()),
	}
	var b strings.Builder
	// The second line's bytes above 127 mark the file as binary (ISO
	// 32000-1, 7.5.2).
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objects))
	for i, obj := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, obj)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return []byte(b.String())
}
