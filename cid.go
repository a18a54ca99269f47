package postroom

// Inline images: the html refers to each by its Content-ID (cid:logo in
// an src attribute), and each image must be referred to. validate checks
// the ids (checkCID); the layout, which has the html source (looked up
// for message.send_template), checks the references (checkCIDs).

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/postroom/postroom/internal/mimemsg"
)

// cidRefs are the cid: references found in an html source.
type cidRefs struct {
	static  map[string]bool
	dynamic bool // a cid: followed by a placeholder: its target is known per recipient only
}

// findCIDRefs lists the cid: references of an html template source. A
// reference is the longest run of cid characters after "cid:" (matched case
// insensitively, as URL schemes are); one that runs into "{{" is dynamic.
func findCIDRefs(src string) cidRefs {
	refs := cidRefs{static: map[string]bool{}}
	rest := src
	for {
		i := indexFold(rest, "cid:")
		if i < 0 {
			return refs
		}
		rest = rest[i+4:]
		n := 0
		for n < len(rest) && isCIDChar(rest[n]) {
			n++
		}
		if strings.HasPrefix(rest[n:], "{{") || (n > 0 && strings.HasPrefix(rest[:n], "{{")) {
			refs.dynamic = true
		} else if n > 0 {
			refs.static[rest[:n]] = true
		}
		rest = rest[n:]
	}
}

// indexFold is strings.Index for an ASCII lower-case needle, ignoring case.
// A needle that ends in a character other than a letter (as "cid:" does)
// is found by its last octet with strings.IndexByte, which skips text
// without it many octets at a time.
func indexFold(s, needle string) int {
	if last := needle[len(needle)-1]; last < 'a' || last > 'z' {
		for off := len(needle) - 1; off < len(s); {
			j := strings.IndexByte(s[off:], last)
			if j < 0 {
				return -1
			}
			end := off + j + 1
			if strings.EqualFold(s[end-len(needle):end], needle) {
				return end - len(needle)
			}
			off = end
		}
		return -1
	}
	for i := 0; i+len(needle) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

// isCIDChar reports whether c may appear in a content id postroom accepts:
// RFC 5322 atext except '{', '}' and '|' (so that a placeholder cannot hide in
// one) and '\” (which ends an html attribute), plus '.' and '@'.
func isCIDChar(c byte) bool {
	return c == '.' || c == '@' || mimemsg.IsAtext(c) && c != '{' && c != '}' && c != '|' && c != '\''
}

// checkCID reports why cid cannot be a Content-ID, or "".
func checkCID(cid string) string {
	if cid == "" {
		return "empty"
	}
	if len(cid) > 250 {
		return "longer than 250 octets"
	}
	for i := 0; i < len(cid); i++ {
		if !isCIDChar(cid[i]) {
			return firstChar(cid, i) + " is not allowed in a content id (RFC 5322 atext, '.', '@')"
		}
	}
	return ""
}

// checkCIDs checks that every static cid: reference of the html has an
// image and that every image is referenced. An image whose cid is not
// valid is left to decodeFiles, which reports it, and so is a reference
// that is such a cid cut short at its first invalid character: one bad
// cid gives one error.
func checkCIDs(html templateSource, images []Image) []error {
	refs := findCIDRefs(html.src)
	have := make(map[string]bool, len(images))
	var bad []string
	var errs []error
	for i, img := range images {
		if checkCID(img.CID) != "" {
			bad = append(bad, img.CID)
			continue
		}
		have[img.CID] = true
		if !refs.static[img.CID] && !refs.dynamic {
			errs = append(errs, &ValidationError{Field: fmt.Sprintf("message.images[%d].cid", i), Reason: fmt.Sprintf("cid:%s is not referenced by the html", img.CID)})
		}
	}
	for _, cid := range slices.Sorted(maps.Keys(refs.static)) {
		if !have[cid] && !slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, cid) }) {
			errs = append(errs, &ValidationError{Field: html.field, Reason: fmt.Sprintf("cid:%s has no image in message.images", cid)})
		}
	}
	return errs
}
