package bounce

import (
	"strings"
	"unicode/utf8"
)

// cleanAddress returns s as a bare address: the type prefix of a DSN
// field ("rfc822;", "utf-8;"), angle brackets, quotes and blanks removed,
// xtext (RFC 3461) and utf-8-addr (RFC 6533) escapes decoded, the domain
// in lower case. It returns "" when what is left is no address.
func cleanAddress(s string) string {
	s = strings.TrimSpace(s)
	if t, rest, ok := strings.Cut(s, ";"); ok && !strings.Contains(t, "@") {
		typ := strings.ToLower(strings.TrimSpace(t))
		s = strings.TrimSpace(rest)
		switch typ {
		case "rfc822":
			s = decodeXtext(s)
		case "utf-8":
			s = decodeUTF8Addr(s)
		}
	}
	if i := strings.IndexByte(s, '<'); i >= 0 {
		if j := strings.IndexByte(s[i:], '>'); j > 0 {
			s = s[i+1 : i+j]
		}
	}
	s = strings.Trim(s, " \t<>\"'()[],;:.")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		// "user@example.com (User Name)" or a comment after the address.
		if at := strings.IndexByte(s[:i], '@'); at > 0 {
			s = s[:i]
		}
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 || !utf8.ValidString(s) || strings.ContainsAny(s, " \t\r\n<>") {
		return ""
	}
	return s[:at+1] + strings.ToLower(s[at+1:])
}

// decodeXtext decodes the "+HH" escapes of RFC 3461 xtext that an
// encoder would write ('+', '=', and bytes outside '!'..'~'), leaving any
// other "+" as it is: many servers do not encode.
func decodeXtext(s string) string {
	if !strings.Contains(s, "+") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '+' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if v == '+' || v == '=' || v < '!' || v > '~' {
				b.WriteByte(v)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	if !utf8.ValidString(b.String()) {
		return s // "+ab12" was a plain '+', not an escape
	}
	return b.String()
}

// decodeUTF8Addr decodes the "\x{HHHH}" escapes of RFC 6533's
// utf-8-addr-xtext.
func decodeUTF8Addr(s string) string {
	if !strings.Contains(s, `\x{`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], `\x{`) {
			if j := strings.IndexByte(s[i:], '}'); j > 3 && j < 12 {
				var r rune
				ok := true
				for _, c := range []byte(s[i+3 : i+j]) {
					if !isHex(c) {
						ok = false
						break
					}
					r = r<<4 | rune(unhex(c))
				}
				if ok && utf8.ValidRune(r) {
					b.WriteRune(r)
					i += j
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// isLocalChar reports whether c may be in an unquoted local part (and
// the bytes of UTF-8, for RFC 6531 addresses).
func isLocalChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c >= 0x80 || strings.IndexByte("!#$%&'*+/=?^_`{|}~.-", c) >= 0
}

// isDomainChar reports whether c may be in a domain name.
func isDomainChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c >= 0x80 || c == '.' || c == '-' || c == '_'
}

// addrAt returns the address around the '@' at index at of s, with its
// start and end, or ok false when there is none.
func addrAt(s string, at int) (addr string, start, end int, ok bool) {
	start = at
	for start > 0 && isLocalChar(s[start-1]) {
		start--
	}
	end = at + 1
	for end < len(s) && isDomainChar(s[end]) {
		end++
	}
	local := strings.TrimLeft(s[start:at], ".'`=")
	if len(local) > 5 && strings.EqualFold(local[:5], "smtp=") {
		// Exchange 5.5's X.400 form of an Internet address:
		// "c=US;a= ;p=Org;o=Site;dda:SMTP=user@example.com;".
		local = local[5:]
	}
	start = at - len(local)
	domain := strings.TrimRight(s[at+1:end], ".-_")
	end = at + 1 + len(domain)
	if local == "" || len(local) > 128 || len(domain) < 3 {
		return "", 0, 0, false
	}
	dot := strings.LastIndexByte(domain, '.')
	if dot <= 0 || dot == len(domain)-1 {
		return "", 0, 0, false
	}
	tld := domain[dot+1:]
	for i := 0; i < len(tld); i++ {
		if c := tld[i]; c >= '0' && c <= '9' {
			return "", 0, 0, false // an IP address or a message id, not a mail domain
		}
	}
	return local + "@" + strings.ToLower(domain), start, end, true
}

// isSystemAddress reports whether addr is a mail system's own address
// (the reporter of a bounce, never its subject).
func isSystemAddress(addr string) bool {
	local, _, _ := strings.Cut(strings.ToLower(addr), "@")
	switch local {
	case "mailer-daemon", "postmaster", "mail-daemon", "mailerdaemon", "mdaemon",
		"noreply", "no-reply", "abuse", "root", "bounce", "bounces", "double-bounce",
		"mailer_daemon", "mail.daemon", "daemon", "devnull":
		return true
	}
	return strings.HasPrefix(local, "microsoftexchange") || strings.HasPrefix(local, "mailer-daemon")
}
