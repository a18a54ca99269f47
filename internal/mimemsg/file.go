package mimemsg

// Image and attachment parts: header fields with safe file names, and
// base64 bodies. See mime.go for the layer as a whole.

import (
	"encoding/base64"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// file writes an image or attachment part: header fields and base64 body.
func (b *skelBuilder) file(f *File, inline bool) error {
	mt, params, err := mime.ParseMediaType(f.ContentType)
	if err != nil {
		return fmt.Errorf("postroom: content type %q: %w", f.ContentType, err)
	}
	delete(params, "name")
	ct := mime.FormatMediaType(mt, params)
	if ct == "" {
		return fmt.Errorf("postroom: content type %q cannot be written", f.ContentType)
	}
	disposition, fallback := "attachment", "attachment"
	if inline {
		disposition, fallback = "inline", "image"
	}
	name := SafeFileName(f.Name, fallback)
	if err := b.header("Content-Type", ct+nameParam("name", name)); err != nil {
		return err
	}
	if err := b.header("Content-Disposition", disposition+nameParam("filename", name)); err != nil {
		return err
	}
	if inline {
		if err := b.header("Content-ID", "<"+f.CID+">"); err != nil {
			return err
		}
	}
	b.str("Content-Transfer-Encoding: base64\r\n\r\n")
	if f.Lines != nil {
		b.shared(f.Lines)
	} else {
		b.buf = appendBase64Lines(b.buf, f.Data)
	}
	return nil
}

// nameParam is "; key=value" for a file name: a quoted string when the
// name is printable ASCII, else RFC 2231 (as mime.FormatMediaType writes
// it). SafeFileName leaves no '"' or '\' to escape. A name holding "=?"
// is written in RFC 2231 form too: some readers decode RFC 2047 encoded
// words in a quoted parameter value, against RFC 2047 §5, so that
// "=?utf-8?q?=2E=2E=2Fx?=" would reach them as "../x"; no reader decodes
// them again after RFC 2231 percent-decoding, which gives back the literal
// name.
func nameParam(key, name string) string {
	ascii := !strings.Contains(name, "=?")
	for i := 0; i < len(name) && ascii; i++ {
		if c := name[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			ascii = false
		}
	}
	if ascii {
		return "; " + key + "=\"" + name + "\""
	}
	return "; " + key + "*=utf-8''" + percentEncode(name)
}

// percentEncode is RFC 2231 §4's encoding of a parameter value: octets
// that are not attribute-char (RFC 2231 §7) are written as %XX, as
// mime.FormatMediaType writes them.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c > ' ' && c < 0x7f && !strings.ContainsRune("*'%()<>@,;:\\\"/[]?=", rune(c)) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&0x0f])
	}
	return b.String()
}

// appendBase64Lines appends the base64 of data in lines of 76 characters
// separated by CRLF, with no CRLF after the last line.
func appendBase64Lines(dst, data []byte) []byte {
	const perLine = 57 // input octets per 76-character line
	for len(data) > 0 {
		n := min(perLine, len(data))
		dst = base64.StdEncoding.AppendEncode(dst, data[:n])
		data = data[n:]
		if len(data) > 0 {
			dst = append(dst, '\r', '\n')
		}
	}
	return dst
}

// maxFileName is the longest file name written, in octets: long enough for
// any real name, short enough that even RFC 2231 percent-encoding of it
// keeps the header line within 998 octets.
const maxFileName = 255

// maxDecodes is how many rounds of decoding and reduction SafeFileName
// makes at most: a name encoded twice is decoded twice.
const maxDecodes = 4

// SafeFileName reduces a caller's file name to a safe base name as readers
// will see it: first decoded as RFC 2047 encoded words, as some readers
// decode them in parameters (so "=?utf-8?q?=2E=2E=2Fx?=" counts as
// "../x"), then the part after the last '/' or '\', without invalid
// UTF-8, control or format characters (such as U+202E, which can disguise
// an extension) or '"', trimmed of white space, and cut to maxFileName
// octets keeping a short extension. What is empty, "." or ".." afterwards
// becomes fallback.
func SafeFileName(name, fallback string) string {
	for range maxDecodes {
		r := reduceFileName(decodeWords(name))
		if r == name {
			break
		}
		name = r
	}
	if name == "" || name == "." || name == ".." {
		return fallback
	}
	return name
}

// decodeWords is s with its RFC 2047 encoded words decoded, or s when it
// has none or they do not decode (an unknown charset, say).
func decodeWords(s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	d, err := new(mime.WordDecoder).DecodeHeader(s)
	if err != nil {
		return s
	}
	return d
}

// reduceFileName is one round of SafeFileName's reduction, without the
// decoding and the fallback.
func reduceFileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToValidUTF8(name, "")
	name = strings.Map(func(r rune) rune {
		if r == '"' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if len(name) > maxFileName {
		ext := path.Ext(name)
		if len(ext) > 16 || len(ext) == len(name) {
			ext = ""
		}
		stem := name[:maxFileName-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		name = strings.TrimSpace(stem) + ext
	}
	return name
}
