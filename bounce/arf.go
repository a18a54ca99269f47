package bounce

// RFC 5965 abuse reports (ARF): a multipart/report; report-type=
// feedback-report with a message/feedback-report part (Feedback-Type,
// Original-Rcpt-To, ...) and the returned message or its headers.

import "strings"

// feedbackPart returns the body of the report's machine-readable
// feedback part, or nil. Some senders label it text/plain inside a
// feedback report.
func feedbackPart(m *message) []byte {
	for _, p := range m.parts {
		if !p.returned && p.ctype == "message/feedback-report" {
			return p.body
		}
	}
	if m.report == "feedback-report" {
		for _, p := range m.parts {
			if !p.returned && strings.Contains(lowerASCII(string(p.body)), "feedback-type:") {
				return p.body
			}
		}
	}
	return nil
}

// parseARF fills rep from a feedback part: the feedback type and one
// complaint recipient per Original-Rcpt-To (else the returned message's
// To addresses).
func parseARF(m *message, body []byte, rep *Report) {
	rep.Type, rep.Format = TypeComplaint, "arf"
	var addrs []string
	for _, h := range fieldBlocks(body, maxHeaderBytes) {
		for _, f := range h {
			switch strings.ToLower(f.name) {
			case "feedback-type":
				if rep.FeedbackType == "" {
					rep.FeedbackType = strings.ToLower(strings.TrimSpace(f.value))
				}
			case "original-rcpt-to", "removal-recipient":
				if a := cleanAddress(f.value); a != "" {
					addrs = appendUnique(addrs, a)
				}
			case "reporting-mta":
				if rep.ReportingMTA == "" {
					rep.ReportingMTA = stripType(f.value)
				}
			}
		}
	}
	if len(addrs) == 0 {
		for _, h := range m.returned {
			for _, a := range listAddresses(h.get("To")) {
				addrs = appendUnique(addrs, a)
			}
			if len(addrs) > 0 {
				break
			}
		}
	}
	for _, a := range addrs {
		rep.Recipients = append(rep.Recipients, Recipient{
			Address: a, Action: ActionDelivered, Class: ClassComplaint,
			Diagnostic: rep.FeedbackType,
		})
	}
}

// listAddresses returns the addresses of a header value such as To, in
// order.
func listAddresses(v string) []string {
	var out []string
	for i := 0; i < len(v); i++ {
		if v[i] != '@' {
			continue
		}
		if a, _, end, ok := addrAt(v, i); ok {
			out = append(out, a)
			i = end - 1
		}
	}
	return out
}

// appendUnique appends a to list unless it is there (ignoring case).
func appendUnique(list []string, a string) []string {
	for _, x := range list {
		if strings.EqualFold(x, a) {
			return list
		}
	}
	return append(list, a)
}

// readFeedbackLoop reads the complaints that are not ARF: Microsoft's
// JMRP (the returned message carries X-HmXmrOriginalRecipient) and
// Apple Mail's unsubscribe requests (X-Apple-Unsubscribe: true, whose
// recipient is the From). It reports whether m was one.
func readFeedbackLoop(m *message, rep *Report) bool {
	for _, h := range m.returned {
		if v := h.get("X-HmXmrOriginalRecipient"); v != "" {
			if a := cleanAddress(v); a != "" {
				rep.Type, rep.Format, rep.FeedbackType = TypeComplaint, "jmrp", "abuse"
				rep.Recipients = append(rep.Recipients, Recipient{Address: a, Action: ActionDelivered, Class: ClassComplaint, Diagnostic: "abuse"})
				return true
			}
		}
	}
	if strings.EqualFold(strings.TrimSpace(m.hdr.get("X-Apple-Unsubscribe")), "true") {
		if a := listAddresses(m.hdr.get("From")); len(a) > 0 {
			rep.Type, rep.Format, rep.FeedbackType = TypeComplaint, "apple-unsubscribe", "unsubscribe"
			rep.Recipients = append(rep.Recipients, Recipient{Address: a[0], Action: ActionDelivered, Class: ClassComplaint, Diagnostic: "unsubscribe"})
			return true
		}
	}
	return false
}
