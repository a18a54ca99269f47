package bounce

// A family is the shape of the human-readable bounces of one MTA or
// provider that does not send (or not only) RFC 3464 reports: its fixed
// boilerplate, where the list of failed recipients begins, where the
// returned message begins, and what says it is only a delay. Each family
// is in a file mta_<name>.go; families lists them in the order they are
// tried (the most specific markers first).

import "strings"

// family describes one shape. Every marker is lower case.
type family struct {
	// name is the Report.Format of a message read by this family.
	name string
	// detect are the markers (any one) of the family's body text.
	detect []string
	// start are the markers after which the recipients are listed; the
	// section starts at the first found, else at the top.
	start []string
	// end are the markers where the returned message or other text that
	// names no failed recipient begins (with commonEnd).
	end []string
	// delay are the markers (any one) of a delay warning.
	delay []string
}

// families are tried in this order on the text of a bounce.
var families = []*family{
	&qmailFamily, &eximFamily, &postfixFamily, &sendmailFamily, &exchangeFamily,
	&gmailFamily, &yahooFamily, &aolFamily, &sesFamily, &dominoFamily,
	&courierFamily, &mailEnableFamily, &imailFamily, &groupWiseFamily,
	&mimecastFamily, &zohoFamily, &messagingServerFamily, &mailMarshalFamily,
	&x4Family, &mdaemonFamily, &dragonFlyFamily, &kddiFamily, &kerioFamily, &novellFamily, &verizonFamily,
	&genericFamily,
}

// commonEnd are markers where a returned message begins, whatever the
// family: nothing after them names a failed recipient.
var commonEnd = []string{
	"--- below this line is a copy of the message",
	"------ this is a copy of the message",
	"----- original message -----",
	"-----original message-----",
	"------ original message ------",
	"original message headers",
	"----- original message follows -----",
	"----- message header follows -----",
	"----- unsent message follows -----",
	"----- returned message follows",
	"--- the header of the original message is following",
	"the original message was:",
	"original message follows",
	"this is a copy of the original message",
	"\nreceived: from ",
	"\nreturn-path: <",
	"\nreturn-path: ",
	"content-type: message/rfc822",
	"content-type: text/rfc822-headers",
	"\n--- original message",
	"\noriginal message:",
	"\n-- \n",
}

// commonDelay are markers of a delay warning, whatever the family.
var commonDelay = []string{
	"this is a warning message only", "this is a warning only",
	"warning: message still undelivered", "message still undelivered",
	"will keep trying", "will continue trying", "still trying", "will retry",
	"will be retried", "not yet been delivered", "has been delayed",
	"delivery has been delayed", "delivery is delayed", "delivery delayed",
	"delayed mail", "no action is required", "you do not need to resend",
	"transient non-fatal errors", "is still being retried", "temporary problem",
	"delivery attempts will continue to be made", // Symantec AntiVirus for SMTP Gateways
	"has been postponed",                         // "Delivery of email to this address ... has been postponed due to a full mailbox."
}

// lowerASCII lower-cases the ASCII letters of s, keeping its length (so
// that offsets in the result are offsets in s).
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// indexAny returns the first index in s of any of the markers and the
// marker's length, or -1.
func indexAny(s string, markers []string) (int, int) {
	best, n := -1, 0
	for _, m := range markers {
		if i := strings.Index(s, m); i >= 0 && (best < 0 || i < best) {
			best, n = i, len(m)
		}
	}
	return best, n
}

// containsAny reports whether s contains one of the markers.
func containsAny(s string, markers []string) bool {
	for _, m := range markers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// findFamily returns the first family whose detect marker lower (the
// lower-cased text) contains in its first 16 KiB, where every family's
// boilerplate is, or nil.
func findFamily(lower string) *family {
	if len(lower) > 16<<10 {
		lower = lower[:16<<10]
	}
	for _, f := range families {
		if containsAny(lower, f.detect) {
			return f
		}
	}
	return nil
}

// section returns the part of text (lower is its lower-cased form) that
// lists the failed recipients, as f's markers bound it (f may be nil).
func section(f *family, text, lower string) string {
	start := 0
	if f != nil {
		if i, n := indexAny(lower, f.start); i >= 0 {
			start = i + n
		}
	}
	end := len(text)
	rest := lower[start:]
	if i, _ := indexAny(rest, commonEnd); i >= 0 {
		end = start + i
	}
	if f != nil {
		if i, _ := indexAny(rest, f.end); i >= 0 && start+i < end {
			end = start + i
		}
	}
	return text[start:end]
}

// isDelay reports whether lower, a bounce's text, is a delay warning.
func isDelay(f *family, lower string) bool {
	return containsAny(lower, commonDelay) || f != nil && containsAny(lower, f.delay)
}
