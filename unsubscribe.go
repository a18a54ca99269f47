package postroom

// One-click unsubscribe (RFC 8058): a List-Unsubscribe-Post header is only
// honoured by mailbox providers next to a List-Unsubscribe header holding
// an https URI, to which they POST "List-Unsubscribe=One-Click". A call
// that asks for one-click unsubscribe without a URI they can use is
// refused, or, when the URI comes from a placeholder, each recipient whose
// value has none is invalid. When DKIM signing is on, both fields are
// signed (internal/dkim signs them when a call has them), as RFC 8058 §4
// requires.
//
// With Options.Unsubscribe, a list call (List-Id, listid.go) without
// List-Unsubscribe headers of its own gets both in each message (a
// transactional call too under Options.UnsubscribeAllMail): the layout adds them (addUnsubscribe),
// the static List-Unsubscribe-Post and a dynamic List-Unsubscribe whose
// value each recipient's build appends (unsubscribeURL).

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/postroom/postroom/internal/mimemsg"
)

// UnsubscribeURLs gives one-click unsubscribe URLs (Options.Unsubscribe):
// URL returns the https URL that unsubscribes address from list, the
// list id of the message (Prepared.List, lower-cased), in accountID, to
// which mailbox providers POST "List-Unsubscribe=One-Click" (RFC 8058).
// list is "" only for a transactional message, under
// Options.UnsubscribeAllMail: the URL then unsubscribes the address from
// all of the account's mail. Package unsubscribe's *Unsubscriber is one.
// It is called once per recipient from the call's workers, concurrently:
// it must be safe for concurrent use, and should not block.
type UnsubscribeURLs interface {
	URL(accountID, address, list string) (string, error)
}

// The header names and the one value of List-Unsubscribe-Post.
const (
	listUnsubscribe     = "List-Unsubscribe"
	listUnsubscribePost = "List-Unsubscribe-Post"
	oneClick            = "List-Unsubscribe=One-Click"
)

// checkUnsubscribe checks the one-click unsubscribe headers of a call
// whose header values compiled to tpl (nil when they did not compile: then
// only the names are checked). It returns the index, among the dynamic
// headers, of a List-Unsubscribe value to check per recipient, or -1, and
// the call's errors, each naming message.headers[i].
func checkUnsubscribe(headers []Header, tpl *templates) (dynamic int, errs []error) {
	post, list := -1, -1
	for i, h := range headers {
		var at *int
		switch {
		case strings.EqualFold(h.Name, listUnsubscribePost):
			at = &post
		case strings.EqualFold(h.Name, listUnsubscribe):
			at = &list
		default:
			continue
		}
		if *at >= 0 {
			errs = append(errs, &ValidationError{Field: fmt.Sprintf("message.headers[%d]", i), Reason: fmt.Sprintf("a second %s header (the first is message.headers[%d])", h.Name, *at)})
			continue
		}
		*at = i
	}
	if post < 0 || len(errs) > 0 {
		return -1, errs
	}
	field := func(i int) string { return fmt.Sprintf("message.headers[%d]", i) }
	if tpl != nil && (tpl.headers[post] != nil || strings.TrimSpace(tpl.headerStatic[post]) != oneClick) {
		errs = append(errs, &ValidationError{Field: field(post) + ".value", Reason: fmt.Sprintf("%s must be exactly %q (RFC 8058)", listUnsubscribePost, oneClick)})
	}
	if list < 0 {
		return -1, append(errs, &ValidationError{Field: field(post), Reason: fmt.Sprintf("%s needs a %s header holding an https URI (RFC 8058)", listUnsubscribePost, listUnsubscribe)})
	}
	if tpl == nil {
		return -1, errs
	}
	if tpl.headers[list] == nil {
		if r := checkOneClickURIs(tpl.headerStatic[list]); r != "" {
			errs = append(errs, &ValidationError{Field: field(list) + ".value", Reason: r})
		}
		return -1, errs
	}
	switch mayHoldHTTPS(headers[list].Value) {
	case httpsStatic:
		return -1, errs
	case httpsNever:
		return -1, append(errs, &ValidationError{Field: field(list) + ".value", Reason: fmt.Sprintf("no entry can render to an https URI, which %s needs (RFC 8058)", listUnsubscribePost)})
	}
	for i := range list {
		if tpl.headers[i] != nil {
			dynamic++
		}
	}
	return dynamic, errs
}

// checkOneClickURIs checks a rendered List-Unsubscribe value: a list of
// <URI> entries (RFC 2369 §2) of which one at least is an https URI. It
// returns the problem, or "".
func checkOneClickURIs(v string) string {
	entries, ok := listEntries(v)
	if !ok {
		return fmt.Sprintf("%s is not a comma-separated list of <URI> entries (RFC 2369)", listUnsubscribe)
	}
	for _, e := range entries {
		if isHTTPSURI(e) {
			return ""
		}
	}
	return fmt.Sprintf("%s holds no https URI, which %s needs (RFC 8058)", listUnsubscribe, listUnsubscribePost)
}

// listEntries returns the URIs of a List-Unsubscribe value, or false when
// it is not a list of <URI> entries.
func listEntries(v string) ([]string, bool) {
	var out []string
	for e := range strings.SplitSeq(v, ",") {
		e = strings.TrimSpace(e)
		if len(e) < 2 || e[0] != '<' || e[len(e)-1] != '>' {
			return nil, false
		}
		out = append(out, e[1:len(e)-1])
	}
	return out, true
}

// isHTTPSURI reports whether s is an absolute https URI with a host.
func isHTTPSURI(s string) bool {
	if strings.ContainsAny(s, " \t<>\"") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && strings.EqualFold(u.Scheme, "https") && u.Host != "" && u.User == nil
}

// httpsChance is what a List-Unsubscribe template can render to.
type httpsChance int

const (
	httpsMaybe  httpsChance = iota // it depends on the recipient
	httpsStatic                    // an entry without placeholders is an https URI
	httpsNever                     // no entry can be an https URI
)

// mayHoldHTTPS tells from a List-Unsubscribe template whether its values
// hold an https URI: for sure when an entry without placeholders is one,
// never when every entry is fixed, or starts with a scheme, before its
// first placeholder, that is not https.
func mayHoldHTTPS(src string) httpsChance {
	entries, ok := listEntries(src)
	if !ok {
		// Placeholders outside the <> or commas inside them: the entries
		// are known only once rendered.
		return httpsMaybe
	}
	chance := httpsNever
	for _, e := range entries {
		prefix, _, templated := strings.Cut(e, "{{")
		switch {
		case !templated:
			if isHTTPSURI(e) {
				return httpsStatic
			}
		case strings.Contains(prefix, ":"):
			scheme, _, _ := strings.Cut(prefix, ":")
			if strings.EqualFold(scheme, "https") {
				chance = httpsMaybe
			}
		case len(prefix) <= len("https") && strings.HasPrefix("https", strings.ToLower(prefix)):
			chance = httpsMaybe // the scheme itself, or part of it, comes from a placeholder
		}
	}
	return chance
}

// recipientUnsubscribe checks a recipient's rendered List-Unsubscribe
// value when the call's could not be checked as a whole: it returns the
// recipient's outcome when the value holds no https URI, else the zero
// outcome.
func (j *job) recipientUnsubscribe(w *worker) outcome {
	if j.unsubscribe < 0 {
		return outcome{}
	}
	if r := checkOneClickURIs(w.rb.headerVals[j.unsubscribe]); r != "" {
		return invalid(ReasonRenderError, r)
	}
	return outcome{}
}

// hasOwnUnsubscribe reports whether headers hold a List-Unsubscribe or
// List-Unsubscribe-Post field: the call then writes its own, and
// Options.Unsubscribe adds nothing.
func hasOwnUnsubscribe(headers []Header) bool {
	for _, h := range headers {
		if strings.EqualFold(h.Name, listUnsubscribe) || strings.EqualFold(h.Name, listUnsubscribePost) {
			return true
		}
	}
	return false
}

// addUnsubscribe appends to a layout's custom headers the two fields
// Options.Unsubscribe adds: List-Unsubscribe, dynamic (its value is the
// last of each recipient's header values), then List-Unsubscribe-Post.
func addUnsubscribe(headers []mimemsg.Header) []mimemsg.Header {
	return append(headers,
		mimemsg.Header{Name: listUnsubscribe, Dynamic: true},
		mimemsg.Header{Name: listUnsubscribePost, Value: oneClick})
}

// unsubscribeURL appends to w's header values the List-Unsubscribe value
// of the recipient at addr when the layout has the fields
// Options.Unsubscribe adds. It returns the recipient's outcome when its
// URL fails or is not an https URI, else the zero outcome.
func (j *job) unsubscribeURL(w *worker, addr string) outcome {
	if !j.addUnsubscribe {
		return outcome{}
	}
	u, err := j.m.opts.Unsubscribe.URL(j.call.AccountID, addr, j.list)
	if err != nil {
		return outcome{status: StatusInvalid, code: ReasonRenderError, detail: "no one-click unsubscribe URL (Options.Unsubscribe failed)", err: err, logErr: true}
	}
	if !isHTTPSURI(u) {
		return invalid(ReasonRenderError, fmt.Sprintf("Options.Unsubscribe gave %s a value that is not an https URI (RFC 8058)", listUnsubscribe))
	}
	w.rb.headerVals = append(w.rb.headerVals, "<"+u+">")
	return outcome{}
}
