package postroom

// VERP (variable envelope return path): each recipient's envelope sender
// carries its send_id, so that a bounce or DSN that arrives later, to that
// address, tells which recipient's Result it is about, without parsing the
// bounce's text.

import (
	"strings"

	"github.com/postroom/postroom/internal/mimemsg"
	"github.com/postroom/postroom/internal/sendid"
	"github.com/postroom/postroom/option"
)

// VERP makes the envelope sender (MAIL FROM, which becomes the delivered
// message's Return-Path) of each message Local+"+"+send_id+"@"+Domain,
// for example bounces+0f3c...@bounce.example.com. The zero VERP is off:
// the envelope sender is the call's from_email. The Domain's mail must
// reach the application, which reads the send_id back with SendID. The
// bcc copies travel in the recipient's transaction, so a bounce of a bcc
// address carries the recipient's send_id too.
type VERP struct {
	// Local is the local part before the "+": a dot-atom of at most 31
	// octets without "+". Empty means DefaultVERPLocal.
	Local string

	// Domain is the domain of the envelope senders, in lower case A-label
	// form, such as "bounce.example.com". Empty means VERP is off.
	Domain string
}

// maxVERPLocal is the longest VERP.Local: with "+" and a 32-character send
// id it makes a 64-octet local part (RFC 5321 §4.5.3.1.1).
const maxVERPLocal = 64 - 1 - sendid.Len

// checkVERP checks Options.VERP, its default filled in by setDefaults.
func (o *Options) checkVERP() error {
	v := &o.VERP
	if v.Domain == "" {
		if v.Local != "" {
			return option.Errorf(opNew, "Options.VERP.Local", "is set without a Domain")
		}
		return nil
	}
	if p := checkHostname(v.Domain); p != "" {
		return option.Errorf(opNew, "Options.VERP.Domain", "%q: %s", v.Domain, p)
	}
	if len(v.Local) > maxVERPLocal || !mimemsg.IsDotAtom(v.Local) || strings.Contains(v.Local, "+") {
		return option.Errorf(opNew, "Options.VERP.Local", "%q is not a dot-atom of at most %d octets without '+'", v.Local, maxVERPLocal)
	}
	return nil
}

// Address returns the envelope sender of the message whose send id is
// sendID. v must be on (Domain set).
func (v VERP) Address(sendID string) string {
	local := v.Local
	if local == "" {
		local = DefaultVERPLocal
	}
	return local + "+" + sendID + "@" + v.Domain
}

// SendID returns the send_id carried by addr, an address that v made
// (as a bounce's recipient or a DSN's Original-Recipient shows it; angle
// brackets and letter case do not matter), and true; or "" and false when
// addr is not one of v's addresses.
func (v VERP) SendID(addr string) (string, bool) {
	local := v.Local
	if local == "" {
		local = DefaultVERPLocal
	}
	addr = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(addr), "<"), ">")
	at := strings.LastIndexByte(addr, '@')
	if v.Domain == "" || at < 0 || !strings.EqualFold(addr[at+1:], v.Domain) {
		return "", false
	}
	prefix, id, ok := strings.Cut(addr[:at], "+")
	if !ok || !strings.EqualFold(prefix, local) {
		return "", false
	}
	id = sendid.Normalize(id)
	return id, id != ""
}

// envelopeFrom is the envelope sender of the message whose send id is id.
func (j *job) envelopeFrom(id string) string {
	if j.m.opts.VERP.Domain == "" {
		return j.from
	}
	return j.m.opts.VERP.Address(id)
}
