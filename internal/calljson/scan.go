package calljson

// The scanner of the fast path: reading the usual shape of a call body (its
// keys, strings without escapes, where a value ends) without encoding/json,
// which reads anything else.

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// SkipSpace returns the offset of the first octet of b from i on that is
// not JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// IsNull reports whether the JSON value at b[i] is null.
func IsNull(b []byte, i int) bool { return bytes.HasPrefix(b[i:], []byte("null")) }

// RawString returns the bytes of the string at b[i] when it has no escape
// and is valid UTF-8 without control characters, and the offset after it.
func RawString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	n := bytes.IndexByte(b[i+1:], '"')
	if n < 0 {
		return nil, 0, false
	}
	s := b[i+1 : i+1+n]
	ascii := true
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return nil, 0, false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(s) {
		return nil, 0, false
	}
	return s, i + n + 2, true
}

// StringValue reads the string at b[i], one with escapes by encoding/json.
func StringValue(b []byte, i int) (string, int, bool) {
	if s, next, ok := RawString(b, i); ok {
		return string(s), next, true
	}
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	end, ok := SkipValue(b, i)
	var s string
	if !ok || json.Unmarshal(b[i:end], &s) != nil {
		return "", 0, false
	}
	return s, end, true
}

// SkipValue returns the offset after the JSON value at b[i], read only
// as far as telling where it ends: the caller checks it.
func SkipValue(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return 0, false
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, true // the end of a scalar
			}
			depth--
			i++
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i, true
			}
			i++
		default:
			i++
		}
		if depth == 0 && i > 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i, true
		}
	}
	if depth == 0 {
		return i, true
	}
	return 0, false
}

// Key reads the object key at b[i] (a string RawString takes) and the
// colon after it, and returns the key and the offset of its value, after
// spaces; ok is false for anything else, or when b ends there.
func Key(b []byte, i int) (key []byte, value int, ok bool) {
	key, next, ok := RawString(b, i)
	if !ok {
		return nil, 0, false
	}
	i = SkipSpace(b, next)
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	if i = SkipSpace(b, i+1); i >= len(b) {
		return nil, 0, false
	}
	return key, i, true
}

// After reads what follows a member or an element, from b[i]: a comma,
// and more is true and next the offset of the next one (after spaces), or
// end (the '}' or ']' that closes the object or array), and more is false
// and next the offset after it. ok is false for anything else.
func After(b []byte, i int, end byte) (next int, more, ok bool) {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return 0, false, false
	}
	switch b[i] {
	case ',':
		return SkipSpace(b, i+1), true, true
	case end:
		return i + 1, false, true
	}
	return 0, false, false
}
