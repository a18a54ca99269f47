package bounce

import "strings"

// aolFamily: AOL's older text ("Your mail to the following recipients
// could not be delivered ...") and AOL on Verizon Media, which writes the
// Yahoo-style "Remote host said" paragraphs.
var aolFamily = family{
	name: "aol",
	detect: []string{
		"your mail to the following recipients could not be delivered",
		"the following recipients could not be delivered because",
		"is not accepting aol mail",
	},
	start: []string{"could not be delivered"},
	end:   []string{"--- below this line is a copy of the message", "----- original message follows -----"},
}

// aolScreenNames returns the recipients that AOL's older text names by
// screen name alone, one indented on each line ("...could not be
// delivered because they are not accepting mail with attachments or
// embedded images:" then "\tjdoe"): each at the domain of the report's
// From (from), AOL's own.
func aolScreenNames(sec, from string) []cand {
	addrs := listAddresses(from)
	if len(addrs) == 0 {
		return nil
	}
	_, domain, _ := strings.Cut(addrs[0], "@")
	var out []cand
	for _, line := range strings.Split(sec, "\n") {
		if line == "" || line[0] != '\t' && line[0] != ' ' {
			continue
		}
		name := strings.TrimSpace(line)
		if len(name) < 3 || len(name) > 64 || !isScreenName(name) || len(out) == maxRecipients {
			continue
		}
		out = append(out, cand{final: name + "@" + domain, diag: sec})
	}
	return out
}

// isScreenName reports whether s is one word of the letters, digits,
// dots, hyphens and underscores of a mailbox name.
func isScreenName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
