package bounce

import (
	"bytes"
	"mime"
	"strings"
)

// field is one header field, its value unfolded (continuation lines
// joined with a space) and trimmed.
type field struct {
	name, value string
}

// header is a header block in its order. Lookups ignore letter case.
type header []field

// get returns the value of the first field named name, or "".
func (h header) get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.name, name) {
			return f.value
		}
	}
	return ""
}

// has reports whether a field named name is present.
func (h header) has(name string) bool {
	for _, f := range h {
		if strings.EqualFold(f.name, name) {
			return true
		}
	}
	return false
}

// headerBuilder collects a header block line by line, keeping at most
// limit bytes of field text.
type headerBuilder struct {
	h     header
	size  int
	limit int
	cont  bool // the last line was kept, so a continuation extends it
}

// add takes one line (without its line end). It reports false when the
// line cannot belong to a header block (neither a field nor a
// continuation), which then starts the body.
func (b *headerBuilder) add(line []byte) bool {
	if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
		if len(b.h) == 0 {
			return len(bytes.TrimSpace(line)) == 0
		}
		if !b.cont {
			return true
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			return true
		}
		if b.size+len(t) > b.limit {
			b.cont = false
			return true
		}
		b.size += len(t) + 1
		f := &b.h[len(b.h)-1]
		if f.value == "" {
			f.value = string(t)
		} else {
			f.value += " " + string(t)
		}
		return true
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || colon > 76 || !isFieldName(line[:colon]) {
		if n := len(b.h); n > 0 && b.cont && strings.HasSuffix(b.h[n-1].value, ";") &&
			bytes.IndexByte(line, '=') > 0 && b.size+len(line) <= b.limit {
			// A parameter continued without its leading blank
			// ("Content-Type: multipart/alternative;" then
			// "boundary=...").
			t := bytes.TrimSpace(line)
			b.size += len(t) + 1
			b.h[n-1].value += " " + string(t)
			return true
		}
		return false
	}
	name := bytes.TrimRight(line[:colon], " \t")
	value := bytes.TrimSpace(line[colon+1:])
	if b.size+len(line) > b.limit {
		b.cont = false
		return true
	}
	b.size += len(line)
	b.h = append(b.h, field{name: string(name), value: string(value)})
	b.cont = true
	return true
}

// isFieldName reports whether b (a name, maybe with trailing blanks
// before the colon) is printable ASCII without blanks inside.
func isFieldName(b []byte) bool {
	b = bytes.TrimRight(b, " \t")
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// fieldBlocks parses b, a body made of header-like blocks separated by
// blank lines (a message/delivery-status or message/feedback-report
// part), into its blocks.
func fieldBlocks(b []byte, limit int) []header {
	var blocks []header
	hb := headerBuilder{limit: limit}
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			if len(hb.h) > 0 {
				blocks = append(blocks, hb.h)
				hb.h, hb.cont, hb.size = nil, false, 0
			}
			continue
		}
		hb.add(line)
	}
	if len(hb.h) > 0 {
		blocks = append(blocks, hb.h)
	}
	return blocks
}

// decodeHeader decodes RFC 2047 encoded words in s, best effort: on
// error it returns s as it is. The result is valid UTF-8.
func decodeHeader(s string) string {
	if strings.Contains(s, "=?") {
		d := mime.WordDecoder{CharsetReader: charsetReader}
		if t, err := d.DecodeHeader(s); err == nil {
			s = t
		}
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// mediaType parses a Content-Type value: the lower-case media type and
// its parameters. A value that mime.ParseMediaType refuses still gives
// its type and, when it shows one, its boundary and report-type.
func mediaType(v string) (string, map[string]string) {
	if v == "" {
		return "", nil
	}
	t, params, err := mime.ParseMediaType(v)
	if err == nil {
		return t, params
	}
	t, rest, _ := strings.Cut(v, ";")
	t = strings.TrimSpace(t)
	if i := strings.IndexAny(t, " \t"); i >= 0 {
		// "text/plain charset=x": the separator is missing.
		t, rest = t[:i], t[i+1:]+";"+rest
	}
	t = strings.ToLower(t)
	params = map[string]string{}
	for _, p := range strings.Split(rest, ";") {
		k, val, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		val = strings.TrimSpace(val)
		val = strings.Trim(val, "\"'")
		if k != "" {
			params[k] = val
		}
	}
	return t, params
}
