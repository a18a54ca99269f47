package postroom

import (
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/postroom/postroom/internal/accountid"
	"github.com/postroom/postroom/internal/mimemsg"
	"golang.org/x/net/idna"
)

// RFC 5321 §4.5.3.1 size limits.
const (
	maxLocalPart = 64
	maxDomain    = 255
	maxPath      = 254 // 256 octets of reverse or forward path, less the angle brackets
	maxLabel     = 63
	maxNameBytes = 512 // display names: far above any real name, far below a line limit
)

// parseAddress checks s as an address for SMTP use and returns it in the
// form the envelope and headers carry: the local part as given, the domain
// in lower-case A-label (ASCII) form. When s is not fit, it returns the
// problem, in words fit for a Result reason or a ValidationError, instead.
//
// It accepts only a bare addr-spec: no display name, no comments, no quoted
// local part and no domain literal (RFC 5321 allows the last two; no mail
// API recipient needs them and relays often mishandle them). The local part
// must be ASCII: a UTF-8 local part (RFC 6531) would need SMTPUTF8 at every
// hop and UTF-8 headers, which postroom does not write. The domain needs at
// least one dot.
//
// A local part holding "=?" is refused: it is atext, but readers that
// decode RFC 2047 encoded words where RFC 2047 forbids them (in an
// addr-spec) would show "=?utf-8?q?ann=40victim.example?=@attacker.example"
// as another address than the envelope's.
func parseAddress(s string) (addr, problem string) {
	if s == "" {
		return "", "empty"
	}
	if strings.ContainsAny(s, "\r\n\x00") {
		return "", "contains CR, LF or NUL"
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return "", "no @"
	}
	local, domain := s[:at], s[at+1:]
	if local == "" {
		return "", "empty local part"
	}
	if len(local) > maxLocalPart {
		return "", fmt.Sprintf("local part longer than %d octets", maxLocalPart)
	}
	if !mimemsg.IsDotAtom(local) {
		if i := strings.IndexFunc(local, func(r rune) bool { return r > '~' }); i >= 0 {
			r, _ := utf8.DecodeRuneInString(local[i:])
			return "", fmt.Sprintf("local part has %s: only ASCII is accepted", charName(r))
		}
		return "", "local part is not a dot-atom of ASCII atext"
	}
	if strings.Contains(local, "=?") {
		return "", `local part holds "=?", which readers may take for an RFC 2047 encoded word`
	}
	if domain == "" {
		return "", "empty domain"
	}
	if domain[0] == '[' {
		return "", "domain literals are not accepted"
	}
	if !utf8.ValidString(domain) {
		// idna would map the invalid bytes to U+FFFD and accept the result.
		return "", "domain is not valid UTF-8"
	}
	ascii, err := idna.Lookup.ToASCII(domain)
	if err != nil {
		return "", "domain is not a valid internationalized domain name"
	}
	ascii = strings.ToLower(ascii)
	if p := checkHostname(ascii); p != "" {
		return "", p
	}
	addr = s // most addresses are already in the form we return
	if ascii != domain {
		addr = local + "@" + ascii
	}
	if len(addr) > maxPath {
		return "", fmt.Sprintf("longer than %d octets", maxPath)
	}
	return addr, ""
}

// trimAddress trims the spaces and tabs around an address as given. CR,
// LF and any other white space stay, for parseAddress to refuse.
func trimAddress(s string) string { return strings.Trim(s, " \t") }

// checkHostname checks an A-label domain: LDH labels of 1 to 63 octets,
// at least two labels, at most 255 octets. It returns the problem, or "".
func checkHostname(d string) string {
	if len(d) > maxDomain {
		return fmt.Sprintf("domain longer than %d octets", maxDomain)
	}
	if !strings.Contains(d, ".") {
		return fmt.Sprintf("domain %q has no dot", d)
	}
	for l := range strings.SplitSeq(d, ".") {
		if l == "" || len(l) > maxLabel {
			return fmt.Sprintf("domain label of %d octets", len(l))
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Sprintf("domain label %q starts or ends with a hyphen", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Sprintf("domain label %q has %q", l, c)
			}
		}
	}
	return ""
}

// charName names the character r for a problem's text: quoted when it is
// printable, else its code point ('ö', U+000B).
func charName(r rune) string {
	if r == utf8.RuneError {
		return "invalid UTF-8"
	}
	if unicode.IsPrint(r) {
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("%U", r)
}

// firstChar is the character at s[i:], named by charName.
func firstChar(s string, i int) string {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return charName(r)
}

// reservedHeaders are the header names a caller may not set: the Mailer
// writes them itself, or they belong to the transport path.
var reservedHeaders = map[string]bool{
	"from": true, "sender": true, "to": true, "cc": true, "bcc": true,
	"reply-to": true, "subject": true, "date": true, "message-id": true,
	"mime-version": true, "return-path": true, "received": true,
	"dkim-signature": true,
}

// maxHeaderName is the longest custom header name, in octets: the name,
// its colon and a space fit in a 78-octet line (RFC 5322 §2.1.1).
const maxHeaderName = 76

// checkHeaderName reports why name cannot be a custom header name, or "".
func checkHeaderName(name string) string {
	if name == "" {
		return "empty"
	}
	if len(name) > maxHeaderName {
		return fmt.Sprintf("longer than %d octets", maxHeaderName)
	}
	for i := 0; i < len(name); i++ {
		// RFC 5322 §2.2: ftext is printable US-ASCII except ':'.
		if c := name[i]; c < 33 || c > 126 || c == ':' {
			return firstChar(name, i) + " is not a header name character (RFC 5322 ftext)"
		}
	}
	lower := strings.ToLower(name)
	if reservedHeaders[lower] || strings.HasPrefix(lower, "content-") {
		return "is reserved: postroom writes " + name + " itself"
	}
	return ""
}

// hasLineBreak reports whether s holds CR, LF or NUL: what would end a
// header line early.
func hasLineBreak(s string) bool { return strings.ContainsAny(s, "\r\n\x00") }

// checkName checks a display name: no control character but tab (a
// vertical tab or a form feed has no business in a header), valid UTF-8,
// at most maxNameBytes.
func checkName(s string) string {
	switch {
	case hasLineBreak(s):
		return "contains CR, LF or NUL"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case len(s) > maxNameBytes:
		return fmt.Sprintf("is longer than %d bytes", maxNameBytes)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\t' }); i >= 0 {
		return "contains the control character " + firstChar(s, i)
	}
	return ""
}

// maxContentType is the longest content_type accepted, in octets: far
// above any real media type with its parameters, and short enough that
// its header line, with the file name, stays within 998 octets.
const maxContentType = 256

// checkContentType checks a file's content type and returns it formatted
// as written in the message, without any name parameter, or the problem.
// kind is "image" or "attachment".
func checkContentType(contentType, kind string) (ct, problem string) {
	if len(contentType) > maxContentType {
		return "", fmt.Sprintf("longer than %d octets", maxContentType)
	}
	mt, params, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
		return "", "not a media type (type/subtype)"
	case !strings.Contains(mt, "/"):
		// mime.ParseMediaType takes a bare token, as in a
		// Content-Disposition, and trims white space around it.
		return "", fmt.Sprintf("%q is not a media type (type/subtype)", mt)
	case kind == "image" && !strings.HasPrefix(mt, "image/"):
		return "", "an inline image must be image/*, not " + mt
	case strings.HasPrefix(mt, "multipart/") || strings.HasPrefix(mt, "message/"):
		return "", mt + " cannot be sent as a file"
	}
	delete(params, "name") // internal/mimemsg writes the name itself
	ct = mime.FormatMediaType(mt, params)
	if ct == "" {
		return "", "cannot be written as a media type"
	}
	return ct, ""
}

// decodeFile checks a content type and base64 content of an image or
// attachment. kind is "image" or "attachment". The content is checked, not
// decoded: lines (Mailer.fileLines) checks it and gives it re-wrapped,
// which is what encoding the decoded content would write.
func decodeFile(field, kind, name, contentType, content string, maxBytes int, lines func(string) ([]byte, error)) (mimemsg.File, []error) {
	var errs []error
	bad := func(sub, reason string, err error) {
		errs = append(errs, &ValidationError{Field: field + "." + sub, Reason: reason, Err: err})
	}
	if r := checkName(name); r != "" {
		bad("name", r, nil)
	}
	if contentType == "" && kind == "attachment" {
		contentType = "application/octet-stream"
	}
	ct, problem := checkContentType(contentType, kind)
	if problem != "" {
		bad("content_type", problem, nil)
	}
	if base64.StdEncoding.DecodedLen(len(content)) > maxBytes {
		bad("content", fmt.Sprintf("larger than the %d-byte message limit", maxBytes), nil)
		return mimemsg.File{}, errs
	}
	encoded, err := lines(content)
	if err != nil {
		bad("content", "not standard base64: "+err.Error(), err)
	}
	if len(errs) > 0 {
		return mimemsg.File{}, errs
	}
	return mimemsg.File{Name: name, ContentType: ct, Lines: encoded}, nil
}

// decodeFiles checks and decodes a message's images and attachments.
func decodeFiles(msg *Message, maxBytes int, lines func(string) ([]byte, error)) (images, attachments []mimemsg.File, errs []error) {
	for i, img := range msg.Images {
		field := fmt.Sprintf("message.images[%d]", i)
		f, ferrs := decodeFile(field, "image", img.Name, img.ContentType, img.Content, maxBytes, lines)
		if r := checkCID(img.CID); r != "" {
			ferrs = append(ferrs, &ValidationError{Field: field + ".cid", Reason: r})
		}
		for _, prev := range msg.Images[:i] {
			if prev.CID == img.CID {
				ferrs = append(ferrs, &ValidationError{Field: field + ".cid", Reason: fmt.Sprintf("%q is used by an earlier image", img.CID)})
				break
			}
		}
		errs = append(errs, ferrs...)
		f.CID = img.CID
		images = append(images, f)
	}
	for i, a := range msg.Attachments {
		f, ferrs := decodeFile(fmt.Sprintf("message.attachments[%d]", i), "attachment", a.Name, a.ContentType, a.Content, maxBytes, lines)
		errs = append(errs, ferrs...)
		attachments = append(attachments, f)
	}
	return images, attachments, errs
}

// checkHeaders checks the custom headers: how many, their names, and that
// their value templates hold no line break.
func checkHeaders(headers []Header, max int) []error {
	if len(headers) > max {
		return []error{&ValidationError{Field: "message.headers", Reason: fmt.Sprintf("%d headers, at most %d", len(headers), max)}}
	}
	var errs []error
	for i, h := range headers {
		if r := checkHeaderName(h.Name); r != "" {
			errs = append(errs, &ValidationError{Field: fmt.Sprintf("message.headers[%d].name", i), Reason: r})
		}
		if hasLineBreak(h.Value) {
			errs = append(errs, &ValidationError{Field: fmt.Sprintf("message.headers[%d].value", i), Reason: "contains CR, LF or NUL"})
		}
	}
	return errs
}

// parseBCC parses message.bcc: a comma-separated address list, each address
// checked for SMTP use. Duplicates are dropped.
func parseBCC(s string, max int) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if hasLineBreak(s) {
		return nil, &ValidationError{Field: "message.bcc", Reason: "contains CR, LF or NUL"}
	}
	list, err := mail.ParseAddressList(s)
	if err != nil {
		return nil, &ValidationError{Field: "message.bcc", Reason: "not an address list: " + err.Error(), Err: err}
	}
	if len(list) > max {
		return nil, &ValidationError{Field: "message.bcc", Reason: fmt.Sprintf("more than %d addresses", max)}
	}
	seen := make(map[string]bool, len(list))
	out := make([]string, 0, len(list))
	for i, a := range list {
		addr, problem := parseAddress(a.Address)
		if problem != "" {
			return nil, &ValidationError{Field: fmt.Sprintf("message.bcc[%d]", i), Reason: problem}
		}
		if k := strings.ToLower(addr); !seen[k] {
			seen[k] = true
			out = append(out, addr)
		}
	}
	return out, nil
}

// checked is what validate found fit in a call, for the layout.
type checked struct {
	replyTo             string // message.replyto_email for SMTP use, or ""
	images, attachments []mimemsg.File
	// headers says the custom headers passed their checks (count, names,
	// no line break), so that their values can be checked once compiled.
	headers bool
	// problems are the call's problems that leave its templates worth
	// compiling (files, headers, bcc): they are reported together with
	// the templates' own.
	problems []error
}

// validate runs every check of a call that needs nothing but the call:
// the recipient count, the message's structure, its files, custom headers
// and bcc, and the recipients. It returns an error alone for a call that
// cannot go further: no recipients or too many (ErrNoRecipients,
// ErrTooManyRecipients), or a call whose account or message structure is
// wrong (account_id, sender, reply-to, subject, the bodies the operation
// takes, template engine).
//
// It sets p.from, p.fromDomain, p.bcc, and the recipients' part of the
// Prepared (p.checks, p.normalized, see checkRecipients).
func (p *Prepared) validate() (*checked, error) {
	opts := &p.m.opts
	switch n := len(p.call.Recipients); {
	case n == 0:
		return nil, ErrNoRecipients
	case n > opts.MaxRecipients:
		return nil, fmt.Errorf("%w: %d, at most %d (Options.MaxRecipients): split the call, or raise Options.MaxRecipients (queued through the outbox, a call is sent in jobs of outbox.Options.JobSize recipients, so a larger limit there does not mean larger jobs)", ErrTooManyRecipients, n, opts.MaxRecipients)
	}
	msg := &p.call.Message
	c := new(checked)
	if err := p.checkStructure(c); err != nil {
		return nil, err
	}
	var errs []error
	c.images, c.attachments, errs = decodeFiles(msg, opts.MaxMessageBytes, p.m.fileLines)
	herrs := checkHeaders(msg.Headers, opts.MaxHeaders)
	c.headers = len(herrs) == 0
	c.problems = append(errs, herrs...)
	var err error
	if p.bcc, err = parseBCC(msg.BCC, opts.MaxBCC); err != nil {
		c.problems = append(c.problems, err)
	}
	p.checkRecipients()
	return c, nil
}

// checkStructure checks the account and the message fields that need no
// template or file: sender, reply-to, subject, which bodies are given,
// template engine.
//
// The account_id is checked as httpapi and package suppression check it
// (internal/accountid): it reaches the stored templates' lookup at once,
// and PostgreSQL's text columns (the outbox's, the events') after.
func (p *Prepared) checkStructure(c *checked) error {
	msg := &p.call.Message
	var errs []error
	bad := func(field, reason string, err error) {
		errs = append(errs, &ValidationError{Field: field, Reason: reason, Err: err})
	}
	if r := accountid.Check(p.call.AccountID); r != "" {
		bad("account_id", r, nil)
	}
	from, problem := parseAddress(trimAddress(msg.FromEmail))
	if problem != "" {
		bad("message.from_email", problem, nil)
	} else {
		p.from = from
		p.fromDomain = from[strings.LastIndexByte(from, '@')+1:]
	}
	if r := checkName(msg.FromName); r != "" {
		bad("message.from_name", r, nil)
	}
	if msg.ReplyToEmail != "" {
		replyTo, problem := parseAddress(trimAddress(msg.ReplyToEmail))
		if problem != "" {
			bad("message.replyto_email", problem, nil)
		}
		c.replyTo = replyTo
	} else if msg.ReplyToName != "" {
		bad("message.replyto_name", "given without replyto_email", nil)
	}
	if r := checkName(msg.ReplyToName); r != "" {
		bad("message.replyto_name", r, nil)
	}
	if hasLineBreak(msg.Subject) {
		bad("message.subject", "contains CR, LF or NUL", nil)
	}
	switch p.op {
	case OpSendTemplate:
		if msg.HTMLTemplateID == "" && msg.TextTemplateID == "" {
			bad("message.html_template_id", "message.send_template needs html_template_id or text_template_id", nil)
		}
		if msg.HTML != "" {
			bad("message.html", "message.send_template takes its html from html_template_id", nil)
		}
		if msg.Text != "" {
			bad("message.text", "message.send_template takes its text from text_template_id", nil)
		}
	case OpSend:
		if msg.HTML == "" && msg.Text == "" {
			bad("message.html", "message.send needs html or text (if the call came from JSON: json.Unmarshal drops fields it does not know, such as a misspelt \"htmll\"; postroom.DecodeCall names them)", nil)
		}
		if msg.HTMLTemplateID != "" {
			bad("message.html_template_id", "only for message.send_template", nil)
		}
		if msg.TextTemplateID != "" {
			bad("message.text_template_id", "only for message.send_template", nil)
		}
	}
	if msg.TemplateEngine != "" && msg.TemplateEngine != "handlebars" {
		bad("message.template_engine", fmt.Sprintf("%q is not supported: use \"handlebars\" or leave it empty", msg.TemplateEngine), nil)
	}
	return errors.Join(errs...)
}

// checkRecipients is the pass over the recipients, in order, as
// duplicates depend on the recipients before: it allocates p.checks and
// fills in the Results of the recipients that are invalid whatever their
// params, and p.normalized. Beyond that it keeps nothing per recipient
// but the index of addresses seen, which the workers do not need.
func (p *Prepared) checkRecipients() {
	rs := p.call.Recipients
	p.checks = make([]Result, len(rs))
	first := make(map[string]int32, len(rs))
	p.normalized = map[int]string{}
	set := func(i int, o outcome) { p.checks[i] = o.result(rs[i].Email, "") }
	for i := range rs {
		r := &rs[i]
		trimmed := trimAddress(r.Email)
		addr, problem := parseAddress(trimmed)
		if problem != "" {
			set(i, invalid(ReasonInvalidEmail, problem))
			continue
		}
		if addr != trimmed {
			p.normalized[i] = addr
		}
		if hasLineBreak(r.Name) {
			set(i, invalid(ReasonHeaderInjection, "name"))
			continue
		}
		if reason := checkName(r.Name); reason != "" {
			set(i, invalid(ReasonInvalidEmail, "name "+reason))
			continue
		}
		key := strings.ToLower(addr)
		if k, dup := first[key]; dup {
			set(i, invalid(ReasonDuplicate, fmt.Sprintf("same address as recipients[%d]", k)))
			continue
		}
		first[key] = int32(i)
	}
}
