package console

// The templates pages: the account's stored templates, one template with
// its draft and versions, a render with sample params, and a publish.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/templatestore"
)

// Templates is what the templates pages call: the List, Info and Publish
// of a templatestore.Manager, which templatestore.Memory and
// templatestore.SQL implement.
type Templates interface {
	List(ctx context.Context, accountID string) ([]templatestore.Template, error)
	Info(ctx context.Context, accountID, id string) (*templatestore.Template, error)
	Publish(ctx context.Context, accountID, id string) (*templatestore.Template, error)
}

var _ Templates = templatestore.Manager(nil)

// Renderer renders a template with sample params: *postroom.Mailer's
// RenderTemplate. The console gives no key (TemplateSample.Key is
// empty), so the Mailer is one made with postroom.NoAuth.
type Renderer interface {
	RenderTemplate(ctx context.Context, s postroom.TemplateSample) (*postroom.PreviewRecipient, error)
}

var _ Renderer = (*postroom.Mailer)(nil)

// templatesView is the data of the templates page: one page of the
// account's templates, by id.
type templatesView struct {
	Templates []templatestore.Template
	Next      int // the next page's number, 0 when none
}

// templates lists the account's templates, a page at a time.
func (h *Handler) templates(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	all, err := h.opts.Templates.List(r.Context(), account)
	if err != nil && !errors.Is(err, templatestore.ErrInvalidID) {
		h.fail(w, r, http.StatusBadGateway, account, "Templates", "The template store could not answer; try again.", err)
		return
	}
	p, _ := strconv.Atoi(r.FormValue("page"))
	p = max(p, 0)
	v := &templatesView{}
	if from := p * h.opts.PageSize; from < len(all) {
		v.Templates = all[from:min(from+h.opts.PageSize, len(all))]
		if from+h.opts.PageSize < len(all) {
			v.Next = p + 1
		}
	}
	h.show(w, r, 0, &view{Title: "Templates", Account: account, Templates: v})
}

// templateView is the data of a template's page.
type templateView struct {
	T *templatestore.Template
	// Unpublished says the draft is not the live source.
	Unpublished bool
	CanRender   bool
	// The render form and its outcome.
	Form     renderForm
	Rendered *postroom.PreviewRecipient
	Refused  []string
}

// renderForm is the render form's fields.
type renderForm struct {
	Which   string // draft or live
	Part    string // html or text
	Subject string
	Params  string // a JSON object
}

// template shows a template: its draft, its live version, its kept
// versions, and the render form.
func (h *Handler) template(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	v, ok := h.templateOf(w, r, account, strings.TrimSpace(r.FormValue("id")))
	if !ok {
		return
	}
	notice := ""
	if n := r.FormValue("published"); n != "" {
		notice = "Published as version " + n + "."
	}
	h.show(w, r, 0, &view{Title: "Template " + v.T.ID, Account: account, Template: v, Notice: notice})
}

// templateOf returns the view of template id, or answers the page and
// false.
func (h *Handler) templateOf(w http.ResponseWriter, r *http.Request, account, id string) (*templateView, bool) {
	t, err := h.opts.Templates.Info(r.Context(), account, id)
	switch {
	case errors.Is(err, postroom.ErrTemplateNotFound), errors.Is(err, templatestore.ErrInvalidID):
		h.fail(w, r, http.StatusNotFound, account, "Template", "This account has no template "+id+".", nil)
		return nil, false
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, account, "Template", "The template store could not answer; try again.", err)
		return nil, false
	}
	v := &templateView{T: t, CanRender: h.opts.Renderer != nil, Form: renderForm{Which: "draft", Part: "html", Params: "{}"}}
	v.Unpublished = t.Published == nil || t.Published.Source != t.Draft
	if strings.HasSuffix(t.ID, ".txt") {
		v.Form.Part = "text"
	}
	return v, true
}

// maxRenderForm bounds the render form: the sample params and subject.
const maxRenderForm = 1 << 20

// render renders the template's draft or live version with the form's
// sample params and subject, and shows the outcome on its page. It
// changes nothing.
func (h *Handler) render(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxRenderForm)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, http.StatusRequestEntityTooLarge, account, "Render", "The form is larger than the console takes.", nil)
		return
	}
	v, ok := h.templateOf(w, r, account, strings.TrimSpace(r.PostFormValue("id")))
	if !ok {
		return
	}
	if h.opts.Renderer == nil {
		h.fail(w, r, http.StatusNotFound, account, "Render", "This console renders no template.", nil)
		return
	}
	v.Form = renderForm{Which: r.PostFormValue("which"), Part: r.PostFormValue("part"), Subject: r.PostFormValue("subject"), Params: r.PostFormValue("params")}
	source := v.T.Draft
	if v.Form.Which == "live" {
		if v.T.Published == nil {
			v.Refused = []string{"the template has no live version: render the draft"}
		} else {
			source = v.T.Published.Source
		}
	}
	var params postroom.Params
	if p := strings.TrimSpace(v.Form.Params); p != "" {
		if err := json.Unmarshal([]byte(p), &params); err != nil {
			v.Refused = append(v.Refused, "the sample params are not a JSON object: "+err.Error())
		}
	}
	if len(v.Refused) == 0 {
		s := postroom.TemplateSample{AccountID: account, Subject: v.Form.Subject, Params: params}
		if v.Form.Part == "text" {
			s.Text = source
		} else {
			s.HTML = source
		}
		pr, err := h.opts.Renderer.RenderTemplate(r.Context(), s)
		switch {
		case err == nil:
			v.Rendered = pr
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return
		default:
			v.Refused = refusals(err)
			if errors.Is(err, postroom.ErrUnauthorized) {
				v.Refused = []string{"the renderer refused the account: give the console a Mailer made with postroom.NoAuth"}
			}
		}
	}
	h.show(w, r, 0, &view{Title: "Template " + v.T.ID, Account: account, Template: v})
}

// refusals are the messages of the *postroom.ValidationError (joined or
// not) of a render, or the error's text.
func refusals(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if ve := (*postroom.ValidationError)(nil); errors.As(err, &ve) {
			out = append(out, ve.Field+": "+ve.Reason)
			return
		}
		out = append(out, err.Error())
	}
	walk(err)
	return out
}

// publish makes the template's draft live, then shows the template.
func (h *Handler) publish(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.PostFormValue("id"))
	t, err := h.opts.Templates.Publish(r.Context(), account, id)
	switch {
	case errors.Is(err, postroom.ErrTemplateNotFound), errors.Is(err, templatestore.ErrInvalidID):
		h.fail(w, r, http.StatusNotFound, account, "Publish", "This account has no template "+id+": nothing was published.", nil)
		return
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, account, "Publish", "The template store could not answer; look at the template again.", err)
		return
	}
	version := 0
	if t.Published != nil {
		version = t.Published.Version
	}
	h.opts.Logger.Info("console: published a template", "account_id", account, "template", id, "version", version)
	seeOther(w, r, "template", url.Values{"id": {id}, "published": {strconv.Itoa(version)}})
}
