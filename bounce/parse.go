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
	return analyze(m), nil
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
	fam := findFamily(lower)
	if readDSN(m, rep, text, lower, fam) {
		finishType(rep)
		return rep
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
	readText(m, rep, text, lower, fam)
	finishType(rep)
	return rep
}

// readDSN reads the message's delivery-status parts into rep and reports
// whether they named any recipient.
func readDSN(m *message, rep *Report, text, lower string, fam *family) bool {
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
	scanned := scanText(section(fam, text, lower), func(string) bool { return false })
	for i := range cands {
		c := &cands[i]
		chunk := ""
		for _, s := range scanned {
			if strings.EqualFold(s.final, c.final) || strings.EqualFold(s.final, c.orig) {
				chunk = s.diag
				break
			}
		}
		if chunk == "" && len(cands) == 1 && len(scanned) == 1 {
			chunk = scanned[0].diag
		}
		thin := c.diag == "" || findStatus(c.diag) == "" && findReplyCode(" "+c.diag) == "" && len(c.diag) <= 20
		if thin && chunk != "" {
			if d := reply(chunk); d != "" {
				c.diag = d
			}
		}
		if chunk == "" && len(cands) == 1 {
			chunk = text
		}
		rep.Recipients = append(rep.Recipients, finish(*c, c.action, c.diag, chunk, ""))
	}
	return true
}

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
		cands = scanText(sec, func(a string) bool { return SendIDFrom(a) != "" })
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
	if isDelay(fam, lower) || delaySubject(rep.Subject) {
		action = ActionDelayed
	}
	for _, c := range cands {
		extra := c.diag
		if len(cands) == 1 && !strings.Contains(sec, c.diag) {
			extra += "\n" + sec
		} else if len(cands) == 1 {
			extra = sec
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
	for _, h := range m.returned {
		own = append(own, listAddresses(h.get("From"))...)
		own = append(own, listAddresses(h.get("Return-Path"))...)
		own = append(own, listAddresses(h.get("Sender"))...)
	}
	return func(a string) bool {
		for _, o := range own {
			if strings.EqualFold(o, a) {
				return true
			}
		}
		return SendIDFrom(a) != ""
	}
}

// finish makes a Recipient of a candidate: its action (from the status
// when the report gave none), status, class and verdict. extra is more
// text about the recipient, for the class when diag says nothing
// specific. context, when not empty, is the text around the recipient in
// a non-standard bounce: a block it speaks of makes the recipient soft.
func finish(c cand, action, diag, extra, context string) Recipient {
	diag = oneLine(diag)
	status := c.status
	find, findCode := findFailStatus, findFailReplyCode
	if action != "" && action != ActionFailed && action != ActionDelayed {
		find, findCode = findStatus, findReplyCode
	}
	if ds := find(diag); ds != "" && (status == "" || strings.HasSuffix(status, ".0.0") && ds[0] == status[0]) {
		status = ds
	}
	code := findCode(" " + diag)
	if status == "" && code == "" && extra != "" {
		// The reply is elsewhere in the text about this recipient
		// ("Could not be delivered because of 550 5.1.1 User unknown"
		// above the address).
		status = find(extra)
	}
	if action == "" {
		switch {
		case status != "":
			action = actionOf(status[0])
		case code != "":
			action = actionOf(code[0])
		default:
			action = ActionFailed
		}
	}
	class := ClassDelivered
	explicit := status != ""
	switch action {
	case ActionFailed, ActionDelayed:
		class = classify(action, status, diag, extra)
		if status == "" {
			d := byte('5')
			switch {
			case code != "":
				d = code[0]
			case action == ActionDelayed:
				d = '4'
			}
			if d == '2' {
				d = '5'
			}
			status = classStatus(d, class)
		}
	}
	r := Recipient{
		Address:    c.address(),
		Action:     action,
		Status:     status,
		Class:      class,
		Diagnostic: diag,
		RemoteMTA:  c.remote,
	}
	cmd := smtpCommand(diag)
	if cmd == "" {
		cmd = smtpCommand(extra)
	}
	if cmd == "MAIL" && isHardClass(r.Class) {
		// Refused at MAIL FROM: the sender is the subject, not the
		// recipient ("Unroutable sender address").
		r.Class = ClassPolicy
	}
	if action == ActionFailed && status[0] == '4' && (r.Class == ClassNetwork || r.Class == ClassOther) {
		// A temporary failure reported as final: the server gave up.
		r.Class = ClassExpired
	}
	r.Hard = action == ActionFailed && strings.HasPrefix(status, "5.") && isHardClass(r.Class)
	if r.Hard && r.Class == ClassUserUnknown {
		// An unknown user is sure when the status says so (X.1.1, X.1.0),
		// when the server answered RCPT TO, or in the words of a system
		// that says so only of missing mailboxes. After DATA, or with a
		// generic code and no command shown, it may be a filter's
		// refusal of an address that exists.
		sub := status[1:]
		byStatus := explicit && (strings.HasPrefix(sub, ".1.1") || strings.HasPrefix(sub, ".1.0") ||
			strings.HasPrefix(sub, ".1.6"))
		byWords := containsAny(strings.ToLower(diag), sureUnknown) || containsAny(strings.ToLower(extra), sureUnknown)
		r.Hard = byStatus || byWords || cmd == "RCPT"
	}
	if r.Hard && context != "" && containsAny(strings.ToLower(context), contextBlocks) {
		r.Hard = false
	}
	return r
}

// actionOf is the action an enhanced status or reply code class implies.
func actionOf(c byte) string {
	switch c {
	case '2':
		return ActionDelivered
	case '4':
		return ActionDelayed
	}
	return ActionFailed
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

// humanText is the report's human-readable text: its text/plain parts
// outside the returned message (else its text/html ones, tags removed),
// joined.
func humanText(m *message) string {
	var b strings.Builder
	for _, html := range []bool{false, true} {
		for _, p := range m.parts {
			if p.returned || isDSNType(p.ctype) {
				continue
			}
			isHTML := p.ctype == "text/html"
			if html != isHTML || !(p.ctype == "text/plain" || isHTML || p.ctype == "text/enriched" || p.ctype == "") {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			if isHTML {
				b.WriteString(stripTags(string(p.body)))
			} else {
				b.Write(p.body)
			}
		}
		if b.Len() > 0 {
			break
		}
	}
	return strings.ToValidUTF8(strings.ReplaceAll(b.String(), "\r", ""), "\uFFFD")
}

// stripTags turns HTML into text, roughly: tags removed (block ends made
// line ends), the common entities decoded.
func stripTags(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			b.WriteByte(s[i])
			continue
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		tag := lowerASCII(s[i+1 : i+j])
		if hasAnyPrefix(tag, []string{"br", "/p", "p", "/div", "div", "/tr", "tr", "li", "/li", "/h", "/td", "/table"}) {
			b.WriteByte('\n')
		}
		if strings.HasPrefix(tag, "style") || strings.HasPrefix(tag, "script") {
			end := "</" + tag[:strings.IndexAny(tag+" ", " >")] + ">"
			if k := strings.Index(lowerASCII(s[i:]), end); k >= 0 {
				i += k + len(end) - 1
				continue
			}
		}
		i += j
	}
	r := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&nbsp;", " ", "&quot;", "\"", "&#39;", "'", "&#64;", "@")
	return r.Replace(b.String())
}

// systemSenders are lower-case phrases of a mail system's From.
var systemSenders = []string{
	"mailer-daemon", "mailer_daemon", "mailerdaemon", "postmaster", "mail delivery",
	"mail administrator", "mailer daemon", "mail system", "microsoftexchange",
	"mdaemon", "internet mail delivery", "mail router", "delivery status notification",
	"mail-daemon", "mail transport", "bounce", "returned mail", "mail server",
}

// fromSystem reports whether the report's From is a mail system.
func fromSystem(h header) bool {
	return containsAny(strings.ToLower(h.get("From")), systemSenders)
}

// bounceSubjects are lower-case phrases of bounces' subjects, in the
// languages servers use.
var bounceSubjects = []string{
	"undeliver", "undelivered", "delivery status notification", "returned mail",
	"mail delivery failed", "failure notice", "delivery failure", "delivery failed",
	"non-delivery", "nondeliverable", "non deliverable", "could not be delivered",
	"delivery notification", "mail system error", "returned to sender", "delayed mail",
	"delivery delayed", "warning: could not send", "mail delivery problem",
	"message not delivered", "not delivered", "delivery problem", "failed delivery",
	"delivery report", "delivery has failed", "mail could not be delivered",
	"unzustellbar", "nicht zustellbar", "non remis", "non distribuable",
	"no se puede entregar", "no entregado", "non recapitabile", "onbestelbaar",
	"kan inte levereras", "não entregue", "nao entregue", "niedostarczalne",
	"permanent error", "delivery status", "delivery failure notification",
	"mail returned", "bounced mail", "message delivery", "rejected:",
}

// bounceSubject reports whether subject is a bounce's (not a person's
// reply to or forward of one).
func bounceSubject(subject string) bool {
	s := strings.ToLower(strings.TrimSpace(subject))
	if hasAnyPrefix(s, []string{"fwd:", "fw:", "re:", "wg:", "tr:", "aw:", "rv:", "sv:", "vs:"}) {
		return false
	}
	return containsAny(s, bounceSubjects)
}

// delaySubject reports whether subject is a delay warning's.
func delaySubject(subject string) bool {
	s := strings.ToLower(subject)
	return containsAny(s, []string{"(delay)", "delayed mail", "delivery delayed", "warning: could not send", "delivery status notification (delay)", "still undelivered", "delay notification", "delivery delay"})
}

// smtpCommand returns the SMTP command that s (a reply with its context:
// "in reply to RCPT TO command", "after RCPT TO:", ">>> DATA", "after
// end of data") shows the reply answered: "DATA" when the data stage is
// named (the last command of a transcript), else "RCPT", "MAIL" or
// "CONN", else "".
func smtpCommand(s string) string {
	lower := strings.ToLower(s)
	switch {
	case containsWord(s, "DATA") || strings.Contains(lower, "end of data") || strings.Contains(lower, "after data"):
		return "DATA"
	case containsWord(s, "RCPT") || strings.Contains(lower, "rcpt to") || strings.Contains(lower, "does not like recipient"):
		return "RCPT"
	case strings.Contains(lower, "mail from:") || strings.Contains(lower, "mail from command"):
		return "MAIL"
	case containsWord(s, "HELO") || containsWord(s, "EHLO") || containsWord(s, "STARTTLS"):
		return "CONN"
	}
	return ""
}

// containsWord reports whether s contains w not inside a longer word.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isWordChar(s[j-1])) && (end == len(s) || !isWordChar(s[end])) {
			return true
		}
		i = end
	}
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
