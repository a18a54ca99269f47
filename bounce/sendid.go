package bounce

import (
	"strings"

	"github.com/postroom/postroom/internal/sendid"
)

// envelopeHeaders are the headers of a report that show the address it
// was delivered to: postroom's VERP address, when it returns a message
// postroom sent.
var envelopeHeaders = []string{"To", "Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To", "X-Rcpt-To", "X-Original-Recipient", "Original-Recipient"}

// SendIDFrom returns the send id that addr carries when it is a VERP
// address in postroom's form, LOCAL+<32 hex digits>@domain (angle
// brackets, a display name and letter case do not matter), in lower
// case, or "". It does not check LOCAL or the domain: the receiver,
// which knows its VERP settings, proves the address.
func SendIDFrom(addr string) string {
	at := strings.LastIndexByte(addr, '@')
	if at < 33 {
		return ""
	}
	if addr[at-33] != '+' {
		return ""
	}
	return sendid.Normalize(addr[at-32 : at])
}

// sendIDIn returns the first send id of a VERP address in s, a header
// value or a text, or "".
func sendIDIn(s string) string {
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(s[i:], '@')
		if j < 0 {
			return ""
		}
		if id := SendIDFrom(s[:i+j+1]); id != "" {
			return id
		}
		i += j
	}
	return ""
}

// messageIDSendID returns the send id of a Message-ID that postroom
// wrote (<32 hex digits@domain>), or "".
func messageIDSendID(v string) string {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "<")
	local, _, ok := strings.Cut(v, "@")
	if !ok {
		return ""
	}
	return sendid.Normalize(local)
}

// findSendID looks for the send id in the order of trust: the address
// the report was delivered to, the returned message's Return-Path, its
// Message-ID, then a VERP address or Message-ID quoted in the text.
func findSendID(m *message, text string) string {
	for _, f := range m.hdr {
		for _, name := range envelopeHeaders {
			if strings.EqualFold(f.name, name) {
				if id := sendIDIn(f.value); id != "" {
					return id
				}
			}
		}
	}
	for _, h := range m.returned {
		if id := sendIDIn(h.get("Return-Path")); id != "" {
			return id
		}
	}
	for _, h := range m.returned {
		if id := messageIDSendID(h.get("Message-ID")); id != "" {
			return id
		}
	}
	lower := lowerASCII(text)
	for _, key := range []string{"\nreturn-path:", "\nmessage-id:"} {
		if i := strings.Index(lower, key); i >= 0 {
			line := text[i+len(key):]
			if j := strings.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			if id := sendIDIn(line); id != "" {
				return id
			}
			if key == "\nmessage-id:" {
				if id := messageIDSendID(line); id != "" {
					return id
				}
			}
		}
	}
	return ""
}
