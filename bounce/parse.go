package bounce

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNilReader is returned by Parse when its reader is nil.
var ErrNilReader = errors.New("bounce: nil reader")

// Parse reads one returned message from r and tells what it reports. It
// reads at most 8 MiB of r and keeps at most a bounded amount of it (see
// the package documentation's Limits), so a message of any size is read
// in bounded memory; it does not read r to its end. A message that is no
// report gives TypeNone and no error: the only errors are a nil reader
// and r's own read errors (wrapped; errors.Is finds them). Parse never
// panics, on any bytes; it is safe for concurrent use.
func Parse(r io.Reader) (*Report, error) {
	if r == nil {
		return nil, ErrNilReader
	}
	er := &errReader{r: r}
	m := walk(er)
	if er.err != nil {
		return nil, fmt.Errorf("bounce: reading the message: %w", er.err)
	}
	rep := analyze(m)
	rep.validUTF8()
	return rep, nil
}

// validUTF8 replaces each invalid UTF-8 sequence in rep's text with
// U+FFFD: a message may say anything in any bytes, and a Report's JSON and
// its readers want text (found by FuzzParse: an address of 8-bit bytes in
// a header without a charset).
func (rep *Report) validUTF8() {
	for _, s := range []*string{&rep.FeedbackType, &rep.ReportingMTA, &rep.Subject, &rep.OriginalMessageID, &rep.Format} {
		*s = strings.ToValidUTF8(*s, "\uFFFD")
	}
	for i := range rep.Recipients {
		r := &rep.Recipients[i]
		for _, s := range []*string{&r.Address, &r.Status, &r.Diagnostic, &r.RemoteMTA} {
			*s = strings.ToValidUTF8(*s, "\uFFFD")
		}
	}
}

// errReader keeps the first error of r other than io.EOF.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// analyze makes the report of a walked message: an ARF complaint, an RFC
// 3464 / 6533 DSN, an automatic reply, a non-standard bounce, or none.
func analyze(m *message) *Report {
	rep := &Report{Type: TypeNone, Recipients: []Recipient{}}
	rep.Subject = oneLine(decodeHeader(m.hdr.get("Subject")))
	for _, h := range m.returned {
		if id := h.get("Message-ID"); id != "" {
			rep.OriginalMessageID = strings.Trim(strings.TrimSpace(id), "<>")
			break
		}
	}
	text := humanText(m)
	rep.SendID = findSendID(m, text)
	if body := feedbackPart(m); body != nil {
		parseARF(m, body, rep)
		return rep
	}
	if readFeedbackLoop(m, rep) || readSESJSON(text, rep) {
		return rep
	}
	lower := lowerASCII(text)
	if readDSN(m, rep, text, lower) {
		finishType(rep)
		return rep
	}
	fam := findFamily(lower)
	if fam == nil && fmlNotice(m.hdr) {
		fam = &fmlFamily
	}
	bounceish := m.report == "delivery-status" || fromSystem(m.hdr) || bounceSubject(rep.Subject)
	if !bounceish && isAutoReply(m.hdr, rep.Subject) {
		rep.Type, rep.Format = TypeAutoReply, "rfc3834"
		if a := listAddresses(m.hdr.get("From")); len(a) > 0 {
			rep.Recipients = append(rep.Recipients, Recipient{Address: a[0], Action: ActionDelivered, Class: ClassAutoReply})
		}
		return rep
	}
	if !bounceish && (fam == nil || fam == &genericFamily) {
		return rep
	}
	if !bounceish && isReplySubject(rep.Subject) {
		return rep // a person quoting a bounce
	}
	if m.report == "" && !bounceSubject(rep.Subject) && fam == nil &&
		findFailStatus(text) == "" && findFailReplyCode(text) == "" && matchRules(specificRules, lower) == "" &&
		!(len(m.returned) > 0 && listsRecipients(text)) {
		// From a mail system, but nothing in it reads as a bounce.
		return rep
	}
	readText(m, rep, text, lower, fam)
	finishType(rep)
	return rep
}

// listsRecipients reports whether text has a line that is an address in
// angle brackets and a colon alone ("<user@example.com>:"): the list of
// failed recipients of qmail and the servers that copy it (SinaMail),
// which some send with no reason below.
func listsRecipients(text string) bool {
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		line = strings.TrimSpace(line)
		if len(line) > 5 && line[0] == '<' && strings.HasSuffix(line, ">:") && strings.IndexByte(line, '@') > 0 &&
			!strings.ContainsAny(line[1:len(line)-2], "<> \t") {
			return true
		}
	}
	return false
}

// finishType sets rep.Type from its recipients' actions.
func finishType(rep *Report) {
	failed, delayed := false, false
	for _, r := range rep.Recipients {
		switch r.Action {
		case ActionFailed:
			failed = true
		case ActionDelayed:
			delayed = true
		}
	}
	switch {
	case failed:
		rep.Type = TypeBounce
	case delayed:
		rep.Type = TypeDelay
	case len(rep.Recipients) > 0:
		rep.Type = TypeDeliveryReport
	}
}
