package bounce

// RFC 3464 delivery status notifications and their RFC 6533 global
// form: the message/delivery-status part, a block of per-message fields
// and a block per recipient.

import "strings"

// cand is a recipient as read, before its classification.
type cand struct {
	orig, final string // addresses as read (cleaned)
	action      string
	status      string
	diag        string
	remote      string
	hasAction   bool
	// verdict is the class the reporting MTA itself gives the
	// recipient (PowerMTA's X-PowerMTA-BounceCategory), or "".
	verdict string
}

// address returns the address the sender used: Original-Recipient when
// it is a plain address, else Final-Recipient.
func (c *cand) address() string {
	if c.orig != "" && !strings.HasPrefix(strings.ToUpper(c.orig), "IMCEA") {
		return c.orig
	}
	return c.final
}

// isDSNType reports whether ctype is a delivery-status part.
func isDSNType(ctype string) bool {
	return ctype == "message/delivery-status" || ctype == "message/global-delivery-status"
}

// parseDSN reads a delivery-status part's body: its recipients and the
// Reporting-MTA.
func parseDSN(body []byte) (cands []cand, reportingMTA string) {
	blocks := fieldBlocks(body, maxHeaderBytes)
	var cur *cand
	flush := func() {
		if cur != nil && cur.address() != "" && len(cands) < maxRecipients {
			cands = append(cands, *cur)
		}
		cur = nil
	}
	for _, h := range blocks {
		for _, f := range h {
			name := strings.ToLower(f.name)
			switch name {
			case "reporting-mta":
				if reportingMTA == "" {
					reportingMTA = stripType(f.value)
				}
			case "original-recipient":
				if cur != nil && cur.orig != "" {
					flush()
				}
				if cur == nil {
					cur = &cand{}
				}
				cur.orig = cleanAddress(f.value)
			case "final-recipient", "x-actual-recipient":
				if cur != nil && cur.final != "" {
					if name == "x-actual-recipient" {
						continue
					}
					flush()
				}
				if cur == nil {
					cur = &cand{}
				}
				cur.final = cleanAddress(f.value)
			case "action":
				if cur == nil {
					cur = &cand{}
				}
				if !cur.hasAction {
					cur.action, cur.hasAction = normAction(f.value), true
				}
			case "status":
				if cur == nil {
					cur = &cand{}
				}
				if cur.status == "" {
					cur.status = findStatus(f.value)
					if cur.status == "" {
						if code := findReplyCode(" " + f.value); code != "" {
							cur.status = code[:1] + ".0.0"
						}
					}
				}
			case "diagnostic-code":
				if cur == nil {
					cur = &cand{}
				}
				if cur.diag == "" {
					cur.diag = stripType(f.value)
				}
			case "x-powermta-bouncecategory":
				if cur == nil {
					cur = &cand{}
				}
				cur.verdict = powerMTACategory(f.value)
			case "remote-mta":
				if cur == nil {
					cur = &cand{}
				}
				if cur.remote == "" {
					cur.remote = stripType(f.value)
				}
			}
		}
		flush()
	}
	return cands, reportingMTA
}

// stripType removes the type of a DSN field value ("dns; ", "smtp; ",
// "X-Postfix; ") and cleans its blanks.
func stripType(v string) string {
	if t, rest, ok := strings.Cut(v, ";"); ok && len(t) < 20 && !strings.ContainsAny(strings.TrimSpace(t), " \t") {
		v = rest
	}
	return oneLine(v)
}

// oneLine returns s with every run of blanks and line ends made one
// space, trimmed, valid UTF-8, and at most 1,000 bytes.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() >= 1000 {
			break
		}
	}
	return b.String()
}

// normAction returns the RFC 3464 action a field value names, or "" when
// it names none of the five.
func normAction(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	switch {
	case strings.HasPrefix(v, "fail"):
		return ActionFailed
	case strings.HasPrefix(v, "delay"):
		return ActionDelayed
	case strings.HasPrefix(v, "deliver"):
		return ActionDelivered
	case strings.HasPrefix(v, "relay"):
		return ActionRelayed
	case strings.HasPrefix(v, "expand"):
		return ActionExpanded
	}
	return ""
}

// readDSN reads the message's delivery-status parts into rep and reports
// whether they named any recipient.
func readDSN(m *message, rep *Report, text, lower string) bool {
	var cands []cand
	global := false
	for _, p := range m.parts {
		if p.returned || !isDSNType(p.ctype) {
			continue
		}
		cs, mta := parseDSN(p.body)
		if len(cs) > 0 && p.ctype == "message/global-delivery-status" {
			global = true
		}
		cands = append(cands, cs...)
		if rep.ReportingMTA == "" {
			rep.ReportingMTA = mta
		}
	}
	if len(cands) == 0 {
		// A report quoted in a text body (a relay that wrapped it, or a
		// multipart whose boundaries are gone).
		i := strings.Index(lower, "\nfinal-recipient:")
		if j := strings.Index(lower, "\noriginal-recipient:"); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i >= 0 {
			if j := strings.LastIndex(lower[:i], "\nreporting-mta:"); j >= 0 {
				i = j
			}
			block := text[i:]
			if k := strings.Index(block, "\n--"); k >= 0 {
				block = block[:k]
			}
			var mta string
			cands, mta = parseDSN([]byte(block))
			if rep.ReportingMTA == "" {
				rep.ReportingMTA = mta
			}
			text, lower = text[:i], lower[:i]
		}
	}
	if len(cands) == 0 && (m.report == "delivery-status" || fromSystem(m.hdr) || bounceSubject(rep.Subject)) {
		// A mail system's report that returns another report: the
		// returned one names the recipients (a filter that wraps the
		// bounce it could not deliver, "The following addresses had
		// permanent delivery errors" with the list left empty).
		for _, p := range m.parts {
			if p.returned && isDSNType(p.ctype) && len(cands) == 0 {
				cands, _ = parseDSN(p.body)
			}
		}
	}
	if len(cands) == 0 {
		return false
	}
	rep.Format = "rfc3464"
	if global {
		rep.Format = "rfc6533"
	}
	// A thin report (no Diagnostic-Code) takes the diagnostic from the
	// human-readable part; every recipient takes from it the SMTP
	// command its reply answered, when the report's part does not say.
	scanned := scanText(section(nil, text, lower), func(string) bool { return false })
	chunks := make(map[string]string, len(scanned))
	for _, s := range scanned {
		chunks[strings.ToLower(s.final)] = s.diag
	}
	for i := range cands {
		c := &cands[i]
		chunk, ok := chunks[strings.ToLower(c.final)]
		if !ok {
			chunk = chunks[strings.ToLower(c.orig)]
		}
		if chunk == "" && len(cands) == 1 && len(scanned) == 1 {
			chunk = scanned[0].diag
		}
		if chunk == "" && len(cands) == 1 {
			chunk = text
		}
		thin := c.diag == "" || findStatus(c.diag) == "" && findReplyCode(" "+c.diag) == "" && wordLetters(c.diag) < 12
		if thin && chunk != "" {
			if d := reply(chunk); d != "" {
				c.diag = d
			}
		}
		if c.verdict == "" {
			c.verdict = providerClass(lower, rep.ReportingMTA, c.diag)
		}
		rep.Recipients = append(rep.Recipients, finish(*c, c.action, c.diag, chunk, ""))
	}
	return true
}

// dsnStatus returns the Status of m's delivery-status part when it has
// exactly one recipient block and names no address there (Exim's report
// of a delivery to a file: "Final-Recipient: rfc822;/var/mail/x"), or "":
// the text names the recipient, the part tells the status.
func dsnStatus(m *message) string {
	status, n := "", 0
	for _, p := range m.parts {
		if p.returned || !isDSNType(p.ctype) {
			continue
		}
		for _, h := range fieldBlocks(p.body, maxHeaderBytes) {
			if v := h.get("Status"); v != "" {
				status, n = findStatus(v), n+1
			}
		}
	}
	if n != 1 {
		return ""
	}
	return status
}

// wordLetters counts the letters of s outside the addresses it names:
// a diagnostic that is only an address says nothing.
func wordLetters(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			if _, _, end, ok := addrAt(s, i); ok {
				i = end - 1
				continue
			}
		}
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			n++
		}
	}
	return n
}
