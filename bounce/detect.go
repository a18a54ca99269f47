package bounce

// What tells a report from other mail: its sender, its subject, and the
// human-readable text it carries.

import "strings"

// humanText is the report's human-readable text: its text/plain parts
// outside the returned message (else its text/html ones, tags removed,
// after the multipart's preamble: "This is a multi-part message in MIME
// format." above a report written in HTML only), joined.
func humanText(m *message) string {
	var b strings.Builder
	for _, html := range []bool{false, true} {
		preambleOnly := true
		for _, p := range m.parts {
			if !p.returned && p.ctype == "text/plain" && !p.preamble {
				preambleOnly = false
			}
		}
		for _, p := range m.parts {
			if p.returned || isDSNType(p.ctype) {
				continue
			}
			isHTML := p.ctype == "text/html"
			if html != isHTML || !(p.ctype == "text/plain" || isHTML || p.ctype == "text/enriched" || p.ctype == "") {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			if isHTML {
				b.WriteString(stripTags(string(p.body)))
			} else {
				b.Write(p.body)
			}
		}
		if b.Len() > 0 && !(preambleOnly && !html) {
			break
		}
	}
	return strings.ToValidUTF8(strings.ReplaceAll(b.String(), "\r", ""), "\uFFFD")
}

// stripTags turns HTML into text, roughly: tags removed (block ends made
// line ends), the common entities decoded.
func stripTags(s string) string {
	ls := lowerASCII(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			b.WriteByte(s[i])
			continue
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		tag := ls[i+1 : i+j]
		if hasAnyPrefix(tag, []string{"br", "/p", "p", "/div", "div", "/tr", "tr", "li", "/li", "/h", "/td", "/table"}) {
			b.WriteByte('\n')
		}
		if strings.HasPrefix(tag, "style") || strings.HasPrefix(tag, "script") {
			end := "</" + tag[:strings.IndexAny(tag+" ", " >")] + ">"
			k := strings.Index(ls[i:], end)
			if k < 0 {
				break // the rest is style or script
			}
			i += k + len(end) - 1
			continue
		}
		i += j
	}
	r := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&nbsp;", " ", "&quot;", "\"", "&#39;", "'", "&#64;", "@")
	return r.Replace(b.String())
}

// systemSenders are lower-case phrases of a mail system's From.
var systemSenders = []string{
	"mailer-daemon", "mailer_daemon", "mailerdaemon", "postmaster", "post_master", "mail delivery",
	"mail administrator", "mailer daemon", "mail system", "microsoftexchange",
	"mdaemon", "internet mail delivery", "mail router", "delivery status notification",
	"mail-daemon", "mail transport",
}

// fromSystem reports whether the report's From is a mail system: its
// name, or the null address ("From: <>", Exim's autoreply transport
// answering for a router that refuses an address).
func fromSystem(h header) bool {
	from := h.get("From")
	return containsAny(strings.ToLower(from), systemSenders) || strings.TrimSpace(from) == "<>"
}

// bounceSubjects are lower-case phrases of bounces' subjects, in the
// languages servers use.
var bounceSubjects = []string{
	"undeliver", "undelivered", "delivery status notification", "returned mail",
	"mail delivery failed", "failure notice", "delivery failure", "delivery failed",
	"non-delivery", "nondeliverable", "non deliverable", "could not be delivered",
	"delivery notification", "mail system error", "returned to sender", "delayed mail",
	"delivery delayed", "warning: could not send", "mail delivery problem",
	"message not delivered", "not delivered", "delivery problem", "failed delivery",
	"delivery report", "delivery has failed", "mail could not be delivered",
	"unzustellbar", "nicht zustellbar", "non remis", "non distribuable",
	"no se puede entregar", "no entregado", "non recapitabile", "onbestelbaar",
	"kan inte levereras", "não entregue", "nao entregue", "niedostarczalne",
	"permanent error", "delivery status", "delivery failure notification",
	"mail returned", "bounced mail", "message delivery", "rejected:",
	"mail failure -",         // Exim: "Mail failure - malformed recipient address"
	"not yet been delivered", // "Warning: message has not yet been delivered"
	"delivery warning",       // "Mail Delivery Warning"
}

// bounceSubject reports whether subject is a bounce's (not a person's
// reply to or forward of one).
func bounceSubject(subject string) bool {
	return !isReplySubject(subject) && containsAny(strings.ToLower(subject), bounceSubjects)
}

// isReplySubject reports whether subject is a reply's or a forward's.
func isReplySubject(subject string) bool {
	s := strings.ToLower(strings.TrimSpace(subject))
	return hasAnyPrefix(s, []string{"fwd:", "fw:", "re:", "wg:", "tr:", "aw:", "rv:", "sv:", "vs:"})
}

// delaySubject reports whether subject is a delay warning's.
func delaySubject(subject string) bool {
	s := strings.ToLower(subject)
	return containsAny(s, []string{"(delay)", "delayed mail", "delivery delayed", "warning: could not send", "delivery status notification (delay)", "still undelivered", "delay notification", "delivery delay",
		"not yet been delivered", "delivery warning"})
}
