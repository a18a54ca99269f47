package bounce

// The text scan: the addresses a human-readable bounce names, each with
// the text that follows it up to the next one, and in that text the SMTP
// reply of the remote server. Every recognizer of a non-standard shape
// uses it on the section of the text its boilerplate marks; on its own,
// it is the fallback when nothing else matched.

import "strings"

// headerLinePrefixes start lines that quote a message's headers, whose
// addresses are never the failed recipients.
var headerLinePrefixes = []string{
	"from:", "to:", "cc:", "bcc:", "return-path:", "reply-to:", "sender:",
	"message-id:", "in-reply-to:", "references:", "received:", "envelope-to:",
	"delivered-to:", "x-", "dkim-signature:", "list-", "errors-to:", "resent-",
	"subject:", "date:", "authentication-results:", "arc-", "original-recipient:",
	"final-recipient:", "mail from:", "by ", "for <", "id ", "sender ", "envelope-from",
	"von:", "an:", "de :", "de:", "à:", "para:", "da:", "a:",
}

// senderMarkers, just before an address on its line, say it is the
// sender's (an SMTP transcript's MAIL FROM), not a recipient's.
var senderMarkers = []string{"contact", "please contact", "send mail to", "for further assistance", "mail from:", "mail from:<", "from:<", "from <", "sender ", "sender:", "sender=", "from=<", "return-path", "envelope-from", "your message", "sent by", "reply to"}

// scanText returns the recipients that text names, in order, each with
// the text chunk that follows it as its diagnostic (a raw, multi-line
// chunk; reply makes it a diagnostic), skipping the addresses for which
// skip is true.
func scanText(text string, skip func(string) bool) []cand {
	type occ struct {
		addr, orig string
		start, end int // of the chunk
	}
	var occs []occ
	lineStart := 0
	lineFirst := true // no address seen yet on the current line
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\n' {
			lineStart, lineFirst = i+1, true
			continue
		}
		if c != '@' {
			continue
		}
		addr, start, end, ok := addrAt(text, i)
		if !ok {
			continue
		}
		if isParameter(addr) {
			// "envelope-from=postmaster@bounce.example.com;" in a quoted
			// SPF verdict (Received-SPF, RFC 7208 section 9.1) or
			// "smtp.mailfrom=..." in Authentication-Results: a key and
			// its value, never a failed recipient.
			i = end - 1
			continue
		}
		if a, e, ok := angleAfter(text, start, end); ok {
			// "x@y <a@b>": the first is a display name (RFC 5322's
			// name-addr), the address is the bracketed one (Exim's
			// "malformed address: <a@b> may not follow x@y").
			addr, end = a, e
		}
		i = end - 1
		first := lineFirst
		lineFirst = false
		if !first || skip(addr) {
			continue
		}
		line := strings.ToLower(strings.TrimLeft(text[lineStart:start], " \t>|"))
		if n := len(occs); n > 0 && hasAnySuffix(strings.TrimRight(line, " \t<\"':"), []string{"generated from", "expanded from"}) {
			// Exim's "(generated from alias)", Postfix's "(expanded
			// from <alias>)", Sendmail 8's "(expanded from: alias)":
			// the address the sender used.
			if occs[n-1].orig == "" {
				occs[n-1].orig = addr
			}
			continue
		}
		if strings.IndexByte(line, 0x1b) >= 0 {
			continue // inside ISO-2022-JP text: an address quoted in prose
		}
		if hasAnyPrefix(line, headerLinePrefixes) || hasAnySuffix(strings.TrimRight(line, " \t<\"'"), senderMarkers) {
			continue
		}
		if n := len(occs); n > 0 && strings.EqualFold(occs[n-1].addr, addr) {
			continue // the same address again, in its own chunk
		}
		if len(occs) == 4*maxRecipients {
			break
		}
		if n := len(occs); n > 0 {
			occs[n-1].end = lineStart
		}
		occs = append(occs, occ{addr: addr, start: lineStart, end: len(text)})
	}
	var out []cand
	index := make(map[string]int, len(occs))
	for _, o := range occs {
		chunk := text[o.start:o.end]
		if len(chunk) > 2000 {
			chunk = chunk[:2000]
		}
		key := strings.ToLower(o.addr)
		if j, ok := index[key]; ok {
			if len(out[j].diag) < 2000 {
				out[j].diag += "\n" + chunk
			}
			continue
		}
		if len(out) == maxRecipients {
			break
		}
		index[key] = len(out)
		out = append(out, cand{final: o.addr, orig: o.orig, diag: chunk})
	}
	return out
}

// angleAfter returns the address in angle brackets that follows the
// bare address text[start:end] on its line, after blanks only, and the
// end of that address; ok is false when the address at start is itself
// bracketed or no bracketed address follows.
func angleAfter(text string, start, end int) (addr string, addrEnd int, ok bool) {
	if start > 0 && text[start-1] == '<' {
		return "", 0, false
	}
	j := end
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	if j == end || j >= len(text) || text[j] != '<' {
		return "", 0, false
	}
	k := strings.IndexAny(text[j:], ">\n")
	if k < 0 || text[j+k] != '>' {
		return "", 0, false
	}
	at := strings.IndexByte(text[j:j+k], '@')
	if at < 0 {
		return "", 0, false
	}
	a, s, e, ok := addrAt(text, j+at)
	if !ok || s != j+1 || e != j+k {
		return "", 0, false
	}
	return a, e, true
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func hasAnySuffix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasSuffix(s, strings.TrimRight(p, " <")) {
			return true
		}
	}
	return false
}

// reply returns the SMTP reply in chunk, the text after an address: from
// the first line with a reply or enhanced status code, with its
// continuation lines, on one line; else the chunk's first lines. The
// address prefix of Postfix ("host x[ip] said:"), Sendmail ("<<< ") and
// Exchange ("Remote Server returned '") is removed.
func reply(chunk string) string {
	lines := strings.Split(chunk, "\n")
	best := -1
	for i, l := range lines {
		if findStatus(l) != "" || findReplyCode(" "+l) != "" {
			best = i
			break
		}
	}
	var b strings.Builder
	if best < 0 {
		n := 0
		for _, l := range lines {
			l = strings.TrimSpace(l)
			if l == "" {
				if n > 0 {
					break
				}
				continue
			}
			if strings.HasSuffix(l, ":") && len(l) < 40 && n == 0 {
				continue // a label such as "because:"
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(l)
			if n++; n == 3 {
				break
			}
		}
		return trimReply(oneLine(b.String()))
	}
	for i := best; i < len(lines) && i < best+8; i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			break
		}
		if i > best && (strings.HasPrefix(l, "---") || strings.HasPrefix(strings.ToLower(l), "giving up on")) {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return trimReply(oneLine(b.String()))
}

// replyLeads are the texts that servers put before the remote reply.
var replyLeads = []string{"said:", "returned '", "returned \"", "<<< ", "reason: ", "smtp error from remote mail server after", "error that the other server returned was:", "remote host said:", "the error was:"}

// trimReply removes what comes before the remote reply in s.
func trimReply(s string) string {
	lower := strings.ToLower(s)
	for _, l := range replyLeads {
		if i := strings.Index(lower, l); i >= 0 && i < 300 {
			rest := strings.TrimSpace(s[i+len(l):])
			if findReplyCode(" "+rest) != "" || findStatus(rest) != "" {
				s = rest
				lower = strings.ToLower(s)
			}
		}
	}
	s = strings.TrimPrefix(s, ":")
	s = strings.TrimSuffix(strings.TrimSpace(s), "'")
	if strings.Count(s, ")") > strings.Count(s, "(") {
		s = strings.TrimSuffix(s, ")")
	}
	return strings.TrimSpace(s)
}

// isParameter reports whether addr, as addrAt read it from text, is the
// value of a key=value token ("envelope-from=user@example.com"): its
// local part holds an '='. Addresses whose local part truly holds one
// (SRS's "SRS0=hash=tt=domain=user", BATV's "prvs=tag=user") are envelope
// senders rewritten by forwarders, never the recipient a report is
// about; Exchange 5.5's "SMTP=" prefix is taken off by addrAt before.
func isParameter(addr string) bool {
	at := strings.LastIndexByte(addr, '@')
	return at > 0 && strings.IndexByte(addr[:at], '=') >= 0
}
