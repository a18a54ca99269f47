package preview

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/program"
)

// form is a submitted form.
type form struct {
	Body                                      string
	Op                                        string // "send" or "send_template"
	AccountID, HTMLTemplateID, TextTemplateID string // override the body's when set
	Pick                                      string // recipients by index: "0-4, 9"
	Picked                                    []string
}

// pageData is what page.html shows.
type pageData struct {
	form
	Submitted bool
	// Problem is a refusal that is not about a field (unauthorized, no
	// recipients), or a problem with the form itself.
	Problem  string
	Refusals []refusal
	Parts    []partView
	List     []listItem
	Unlisted int // recipients not listed
	Dropped  int // recipients picked beyond Options.MaxRecipients
	Shown    []recipientView
	Files    []fileView
	// MissingAny holds the params missing for some recipient shown.
	MissingAny map[string]bool
}

// refusal is one reason a call is refused as a whole.
type refusal struct {
	Field, Reason string
	Line, Column  int    // 0: unknown
	Excerpt       string // the source line at Line, when known
}

// partView is one template part and the params it references.
type partView struct {
	Field  string
	Params []string
}

// listItem is one recipient of the call, for picking.
type listItem struct {
	Index       int
	Email, Name string
	Picked      bool
}

// recipientView is one previewed recipient.
type recipientView struct {
	Index          int
	Email, Name    string
	Status, Reason string
	Invalid        bool
	Subject, Text  string
	HasHTML        bool
	Srcdoc         template.HTMLAttr // srcdoc="..." of the html's iframe
	Headers        []postroom.Header
	EnvelopeFrom   string
	EnvelopeTo     []string // the recipient, then the bcc
	Missing        []string
	Rendered       bool // the render ran: the parts are the recipient's
	SendID         string
}

// fileView is an image or attachment of the message.
type fileView struct {
	Kind, Name, CID, ContentType string
	Size                         int
}

// preview previews the call of f.
func (h *Handler) preview(ctx context.Context, f *form) *pageData {
	d := &pageData{form: *f, Submitted: true}
	op := postroom.OpSend
	if f.Op == "send_template" {
		op = postroom.OpSendTemplate
	} else {
		d.Op = "send"
	}
	if strings.TrimSpace(f.Body) == "" {
		d.Problem = "Paste or upload a call body."
		return d
	}
	call, err := postroom.DecodeCall([]byte(f.Body))
	if err != nil {
		d.Refusals = h.refusals(err, nil, f.Body)
		if d.Refusals == nil {
			d.Problem = "The call body is not valid JSON."
		}
		return d
	}
	if f.AccountID != "" {
		call.AccountID = f.AccountID
	}
	if f.HTMLTemplateID != "" {
		call.Message.HTMLTemplateID = f.HTMLTemplateID
	}
	if f.TextTemplateID != "" {
		call.Message.TextTemplateID = f.TextTemplateID
	}

	picked, problem := pick(f.Pick, f.Picked, len(call.Recipients))
	if problem != "" {
		d.Problem = problem
		return d
	}
	if len(picked) == 0 {
		for i := range min(h.opts.Shown, len(call.Recipients)) {
			picked = append(picked, i)
		}
	}
	if len(picked) > h.opts.MaxRecipients {
		d.Dropped = len(picked) - h.opts.MaxRecipients
		picked = picked[:h.opts.MaxRecipients]
	}
	// The checkboxes show the picks from now on (so that unticking one
	// drops it); the text field keeps those of recipients not listed.
	var unlisted []int
	for _, i := range picked {
		if i >= h.opts.MaxListed {
			unlisted = append(unlisted, i)
		}
	}
	d.Pick = formatPick(unlisted)
	for i, r := range call.Recipients {
		if i == h.opts.MaxListed {
			d.Unlisted = len(call.Recipients) - i
			break
		}
		d.List = append(d.List, listItem{Index: i, Email: r.Email, Name: r.Name, Picked: slices.Contains(picked, i)})
	}

	p, err := h.m.Preview(ctx, op, call, postroom.PreviewOptions{Recipients: picked})
	switch {
	case errors.Is(err, postroom.ErrUnauthorized):
		d.Problem = "Refused: the key is not valid for the account (the Mailer's Options.Auth)."
		return d
	case errors.Is(err, postroom.ErrNoRecipients):
		d.Problem = "Refused: the call has no recipients."
		return d
	case errors.Is(err, postroom.ErrTooManyRecipients):
		d.Problem = "Refused: the call has more recipients than the Mailer accepts (Options.MaxRecipients)."
		return d
	case err != nil:
		if d.Refusals = h.refusals(err, call, f.Body); d.Refusals == nil {
			h.opts.Logger.ErrorContext(ctx, "preview", slog.Any("error", err))
			d.Problem = "The preview failed for a reason that is not the call's (see the server's log)."
		}
		return d
	}
	for _, pp := range p.Parts {
		d.Parts = append(d.Parts, partView{Field: pp.Field, Params: pp.Params})
	}
	images := imageURLs(call.Message.Images)
	d.MissingAny = map[string]bool{}
	for _, pr := range p.Recipients {
		r := call.Recipients[pr.Index]
		v := recipientView{
			Index: pr.Index, Email: r.Email, Name: r.Name,
			Status: string(pr.Result.Status), Reason: pr.Result.Reason, Invalid: pr.Result.Status == postroom.StatusInvalid,
			SendID:  pr.Result.SendID,
			Subject: pr.Subject, Text: pr.Text, Headers: pr.Headers, Missing: pr.Missing,
			EnvelopeFrom: pr.EnvelopeFrom, EnvelopeTo: pr.EnvelopeTo,
			Rendered: pr.Subject != "" || pr.HTML != "" || pr.Text != "" || pr.Headers != nil,
		}
		for _, m := range pr.Missing {
			d.MissingAny[m] = true
		}
		if pr.HTML != "" {
			v.HasHTML = true
			v.Srcdoc = template.HTMLAttr(`srcdoc="` + html.EscapeString(inlineImages(pr.HTML, images)) + `"`)
		}
		d.Shown = append(d.Shown, v)
	}
	for _, im := range call.Message.Images {
		d.Files = append(d.Files, fileView{Kind: "inline image", Name: im.Name, CID: im.CID, ContentType: im.ContentType, Size: decodedLen(im.Content)})
	}
	for _, a := range call.Message.Attachments {
		d.Files = append(d.Files, fileView{Kind: "attachment", Name: a.Name, ContentType: a.ContentType, Size: decodedLen(a.Content)})
	}
	return d
}

// refusals lists the *ValidationError values of err, each with the line
// and column of a template's syntax error or of a JSON syntax error, or
// returns nil when err holds another error.
func (h *Handler) refusals(err error, call *postroom.Call, body string) []refusal {
	if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
		line, col := position(body, int(se.Offset))
		return []refusal{{Field: "(body)", Reason: "not valid JSON", Line: line, Column: col, Excerpt: lineOf(body, line)}}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		line, col := position(body, len(body))
		return []refusal{{Field: "(body)", Reason: "the JSON ends too early", Line: line, Column: col}}
	}
	var out []refusal
	var sources map[string]string
	for _, ve := range postroom.ValidationErrors(err) {
		rf := refusal{Field: ve.Field, Reason: ve.Reason}
		if pe := (*program.Error)(nil); errors.As(ve, &pe) {
			rf.Line, rf.Column = pe.Line, pe.Column
			if call != nil {
				if sources == nil {
					sources = templateSources(call)
				}
				rf.Excerpt = lineOf(sources[ve.Field], pe.Line)
			}
		}
		out = append(out, rf)
	}
	return out
}

// templateSources maps each template of the call, by the field a
// ValidationError names it with, to its source: the subject, the bodies
// of message.send and the header values. (The stored bodies of
// message.send_template are not in the call.)
func templateSources(call *postroom.Call) map[string]string {
	msg := &call.Message
	sources := map[string]string{
		"message.subject": msg.Subject,
		"message.html":    msg.HTML,
		"message.text":    msg.Text,
	}
	for i, hd := range msg.Headers {
		sources[fmt.Sprintf("message.headers[%d].value", i)] = hd.Value
	}
	return sources
}

// position returns the 1-based line and column of byte offset off in s.
func position(s string, off int) (line, col int) {
	off = max(0, min(off, len(s)))
	line = 1 + strings.Count(s[:off], "\n")
	return line, off - strings.LastIndexByte(s[:off], '\n')
}

// lineOf returns line n (1-based) of s, or "".
func lineOf(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for i, l := range strings.Split(s, "\n") {
		if i == n-1 {
			return strings.TrimRight(l, "\r")
		}
	}
	return ""
}

// pick reads the recipients picked: the text field's indices and ranges
// ("0-4, 9") and the checkboxes, in ascending order without repeats, or
// the problem to show the author.
func pick(text string, boxes []string, n int) (picked []int, problem string) {
	var out []int
	add := func(i int) string {
		if i < 0 || i >= n {
			return fmt.Sprintf("Recipient %d does not exist: the call has %d recipients (0 to %d).", i, n, n-1)
		}
		out = append(out, i)
		return ""
	}
	for _, b := range boxes {
		i, err := strconv.Atoi(b)
		if err != nil {
			return nil, fmt.Sprintf("Recipient %q is not an index.", b)
		}
		if p := add(i); p != "" {
			return nil, p
		}
	}
	for item := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == ',' || r == ' ' }) {
		lo, hi, isRange := strings.Cut(item, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return nil, fmt.Sprintf("Recipients %q: write indices and ranges, such as 0-4, 9.", text)
		}
		b = min(b, a+n) // past n, add refuses the index
		for i := a; i <= b; i++ {
			if p := add(i); p != "" {
				return nil, p
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), ""
}

// formatPick writes indices as pick reads them, with ranges.
func formatPick(idx []int) string {
	var parts []string
	for k := 0; k < len(idx); {
		j := k
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if j == k {
			parts = append(parts, strconv.Itoa(idx[k]))
		} else {
			parts = append(parts, strconv.Itoa(idx[k])+"-"+strconv.Itoa(idx[j]))
		}
		k = j + 1
	}
	return strings.Join(parts, ", ")
}

// imageURLs maps each inline image's CID to a data: URL of its content.
func imageURLs(images []postroom.Image) map[string]string {
	urls := make(map[string]string, len(images))
	for _, im := range images {
		ct := im.ContentType
		if ct == "" || strings.ContainsAny(ct, ",;\"'<> ") {
			ct = "application/octet-stream"
		}
		urls[im.CID] = "data:" + ct + ";base64," + strings.Join(strings.Fields(im.Content), "")
	}
	return urls
}

// cidRef matches a cid: URL in html, up to the end of its attribute value.
var cidRef = regexp.MustCompile(`(?i)cid:([^"'\s<>()]+)`)

// inlineImages replaces the cid: URLs of the message's images in src by
// their data: URLs, so that the iframe shows them without any request.
func inlineImages(src string, urls map[string]string) string {
	return cidRef.ReplaceAllStringFunc(src, func(ref string) string {
		if u, ok := urls[html.UnescapeString(ref[len("cid:"):])]; ok {
			return u
		}
		return ref
	})
}

// decodedLen is the size of base64 content once decoded.
func decodedLen(content string) int {
	n := len(strings.Join(strings.Fields(content), ""))
	return base64.StdEncoding.DecodedLen(n) - strings.Count(content[max(0, len(content)-2):], "=")
}
