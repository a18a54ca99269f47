package postroom

// List mail (RFC 2919): a call whose message.headers carry List-Id sends
// list mail, and its list is the id between the angle brackets. Every
// other call is transactional. The list decides which suppressions
// silence a recipient (Suppression.Covers) and whether Options.Unsubscribe
// writes one-click unsubscribe headers; events carry it (Event.List).

import (
	"fmt"
	"mime"
	"strings"
)

// listIDHeader is the name of the field that marks list mail.
const listIDHeader = "List-Id"

// MaxListIDBytes is the longest list id, without its angle brackets
// (RFC 2919 §2).
const MaxListIDBytes = 255

// ListID returns the List-Id header (RFC 2919) that makes a call's
// messages list mail of the list id, such as
//
//	postroom.ListID("Shop news", "news.shop.example.com")
//
// for "List-Id: Shop news <news.shop.example.com>". description is the
// list's name for people, "" for none; it is quoted when it holds
// characters a phrase cannot (RFC 5322 specials), and written as an RFC
// 2047 encoded word when it is not ASCII. id is checked when the call is:
// a malformed one refuses the call with a *ValidationError naming the
// header.
func ListID(description, id string) Header {
	v := "<" + id + ">"
	if d := strings.TrimSpace(description); d != "" {
		v = phrase(d) + " " + v
	}
	return Header{Name: listIDHeader, Value: v}
}

// phrase is s as an RFC 5322 phrase: as it is when it is words of atext,
// an encoded word (base64, safe in a phrase) when it is not ASCII, else a
// quoted string.
func phrase(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c < ' ' || c == 0x7f {
			return mime.BEncoding.Encode("utf-8", strings.ToValidUTF8(s, "\uFFFD"))
		}
		plain = plain && (c == ' ' || isAtext(c))
	}
	if plain && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// isAtext reports whether c is an RFC 5322 atext character.
func isAtext(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// checkListID finds the List-Id among headers and returns its list id,
// lower-cased (list ids compare case-insensitively, RFC 2919 §3), or ""
// when there is none, and the problems, each naming message.headers[i]:
// a second List-Id, a value with placeholders (the list decides whose
// suppressions apply before anything is rendered, so it is the same for
// every recipient), or a value that is not RFC 2919's shape.
func checkListID(headers []Header) (string, []error) {
	list, at := "", -1
	var errs []error
	for i, h := range headers {
		if !strings.EqualFold(h.Name, listIDHeader) {
			continue
		}
		field := fmt.Sprintf("message.headers[%d]", i)
		if at >= 0 {
			errs = append(errs, &ValidationError{Field: field, Reason: fmt.Sprintf("a second %s header (the first is message.headers[%d])", listIDHeader, at)})
			continue
		}
		at = i
		if strings.Contains(h.Value, "{{") {
			errs = append(errs, &ValidationError{Field: field + ".value", Reason: listIDHeader + " is the same for every recipient of a call (its list decides whose suppressions apply): it holds no placeholder"})
			continue
		}
		id, r := parseListID(h.Value)
		if r != "" {
			errs = append(errs, &ValidationError{Field: field + ".value", Reason: r})
			continue
		}
		list = id
	}
	return list, errs
}

// parseListID returns the list id of a List-Id value, lower-cased, or
// the reason it is not RFC 2919's shape: an optional phrase, then
// "<" list-label "." namespace ">", the id a dot-atom of at most
// MaxListIDBytes octets with at least one dot.
func parseListID(v string) (id, reason string) {
	v = strings.TrimSpace(v)
	const shape = "want [description] <label.namespace>, such as \"Shop news <news.shop.example.com>\" (RFC 2919)"
	if !strings.HasSuffix(v, ">") {
		return "", "no <list-id> at its end: " + shape
	}
	open := strings.LastIndexByte(v, '<')
	if open < 0 {
		return "", "no <list-id> at its end: " + shape
	}
	if p := v[:open]; strings.ContainsAny(p, "<>") {
		return "", "angle brackets outside the list id: " + shape
	}
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return "", "not ASCII: write a description that is not ASCII as an RFC 2047 encoded word (postroom.ListID does)"
		}
	}
	id = v[open+1 : len(v)-1]
	switch {
	case id == "":
		return "", "an empty list id: " + shape
	case len(id) > MaxListIDBytes:
		return "", fmt.Sprintf("a list id of %d octets, at most %d (RFC 2919)", len(id), MaxListIDBytes)
	case !strings.Contains(id, "."):
		return "", fmt.Sprintf("list id %q has no dot: %s", id, shape)
	}
	for label := range strings.SplitSeq(id, ".") {
		if label == "" {
			return "", fmt.Sprintf("list id %q has an empty label (a leading, trailing or double dot): %s", id, shape)
		}
		for i := 0; i < len(label); i++ {
			if !isAtext(label[i]) {
				return "", fmt.Sprintf("list id %q holds %q, not a dot-atom character (RFC 2919)", id, label[i])
			}
		}
	}
	return strings.ToLower(id), ""
}

// List returns the list id of the call's messages, lower-cased: the id
// of its List-Id header, or "" for a transactional call.
func (p *Prepared) List() string {
	if p == nil {
		return ""
	}
	return p.list
}
