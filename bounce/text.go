package bounce

// Non-standard bounces: the recipients a family's section of the text
// names.

import "strings"

// readText reads a non-standard bounce: the recipients its family's
// section names, else any the whole text names, else the returned
// message's To.
func readText(m *message, rep *Report, text, lower string, fam *family) {
	rep.Format = "text"
	if fam != nil {
		rep.Format = fam.name
	}
	skip := skipper(m)
	sec := section(fam, text, lower)
	cands := scanText(sec, skip)
	if len(cands) == 0 && fam != nil {
		cands = scanText(section(nil, text, lower), skip)
	}
	if len(cands) == 0 {
		// A bounce of a message sent to oneself names the report's own
		// addresses: only the VERP addresses stay skipped.
		cands = scanText(sec, func(a string) bool { return isSystemAddress(a) || SendIDFrom(a) != "" })
	}
	if failed := listAddresses(m.hdr.get("X-Failed-Recipients")); len(failed) > 0 {
		// Exim and Google name the failed recipients in a header: they
		// are the recipients, the text tells why.
		var named []cand
		for _, a := range failed {
			c := cand{final: a, diag: sec}
			for _, s := range cands {
				if strings.EqualFold(s.final, a) {
					c.diag, c.orig = s.diag, s.orig
				}
			}
			named = append(named, c)
		}
		cands = named
	}
	if len(cands) == 0 && fam == &aolFamily {
		cands = aolScreenNames(sec, m.hdr.get("From"))
	}
	if len(cands) == 0 {
		// The returned message quoted in the text: its To.
		if i := strings.Index(lower, "\nto:"); i >= 0 {
			line := text[i+4:]
			if j := strings.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			for _, a := range listAddresses(line) {
				if SendIDFrom(a) == "" {
					cands = append(cands, cand{final: a, diag: sec})
				}
			}
		}
	}
	if len(cands) == 0 {
		for _, h := range m.returned {
			for _, a := range listAddresses(h.get("To")) {
				cands = append(cands, cand{final: a, diag: section(fam, text, lower)})
			}
			if len(cands) > 0 {
				break
			}
		}
	}
	action := ActionFailed
	// The report's own words, not the returned message quoted below them.
	whole := section(nil, text, lower)
	if isDelay(fam, lowerASCII(whole)) || delaySubject(rep.Subject) {
		action = ActionDelayed
	}
	if len(cands) == 1 && cands[0].status == "" && m.report == "delivery-status" {
		cands[0].status = dsnStatus(m)
	}
	for _, c := range cands {
		extra := c.diag
		if len(cands) == 1 {
			// The only recipient: the whole text is about it, the
			// reason above the address included.
			if strings.Contains(whole, c.diag) {
				extra = whole
			} else {
				extra += "\n" + whole
			}
		}
		rep.Recipients = append(rep.Recipients, finish(c, action, reply(c.diag), extra, c.diag))
	}
	if rep.Type == TypeNone {
		rep.Type = TypeBounce
		if action == ActionDelayed {
			rep.Type = TypeDelay
		}
	}
}

// skipper returns the test of the addresses that are never the failed
// recipients of m: the report's own From, To and envelope addresses, and
// the returned message's sender.
func skipper(m *message) func(string) bool {
	var own []string
	for _, name := range []string{"From", "To", "Delivered-To", "Envelope-To", "Return-Path", "Sender", "Reply-To"} {
		own = append(own, listAddresses(m.hdr.get(name))...)
	}
	for i, h := range m.returned {
		if m.nested[i] {
			// A message the returned one quoted (a list server's reply
			// quoting the command mail it answers): its sender is no
			// sender of the returned mail.
			continue
		}
		own = append(own, listAddresses(h.get("From"))...)
		own = append(own, listAddresses(h.get("Return-Path"))...)
		own = append(own, listAddresses(h.get("Sender"))...)
	}
	return func(a string) bool {
		if isSystemAddress(a) {
			return true
		}
		for _, o := range own {
			if strings.EqualFold(o, a) {
				return true
			}
		}
		return SendIDFrom(a) != ""
	}
}
