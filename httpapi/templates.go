package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/templatestore"
)

// Paths of the stored templates' endpoints, served with Options.Templates
// (see the package documentation, # Stored templates).
const (
	TemplatesAddPath     = "/api/1.0/templates.add"
	TemplatesUpdatePath  = "/api/1.0/templates.update"
	TemplatesPublishPath = "/api/1.0/templates.publish"
	TemplatesDeletePath  = "/api/1.0/templates.delete"
	TemplatesInfoPath    = "/api/1.0/templates.info"
	TemplatesListPath    = "/api/1.0/templates.list"
	TemplatesRenderPath  = "/api/1.0/templates.render"
)

// maxTemplatesBody is the largest body of the templates endpoints: a
// template of postroom.DefaultMaxTemplateBytes, escaped in JSON (six bytes
// for a control character at the worst), and the render's params.
const maxTemplatesBody = 8 << 20

// templateAuth is the part of every templates request that says who asks.
type templateAuth = rejectsAuth

// templateSaveRequest is the body of templates.add and templates.update.
type templateSaveRequest struct {
	templateAuth
	// Name is the template's id (Mandrill's name, and its slug).
	Name string `json:"name"`
	// Code is the source (Mandrill's html code).
	Code string `json:"code"`
	// Text is Mandrill's text version, which a template here does not
	// have: a text version is a template of its own.
	Text    string `json:"text"`
	Publish bool   `json:"publish"`
}

// templateNameRequest is the body of templates.delete and templates.info.
type templateNameRequest struct {
	templateAuth
	Name string `json:"name"`
}

// templatePublishRequest is the body of templates.publish.
type templatePublishRequest struct {
	templateAuth
	Name string `json:"name"`
	// Version, when not 0, publishes that kept version again (a rollback)
	// rather than the draft.
	Version int `json:"version"`
}

// templateListRequest is the body of templates.list.
type templateListRequest struct {
	templateAuth
}

// templateRenderRequest is the body of templates.render.
type templateRenderRequest struct {
	templateAuth
	Name string `json:"name"`
	// Code, instead of Name, renders a source not stored.
	Code string `json:"code"`
	// Published renders the live version rather than the draft.
	Published bool            `json:"published"`
	Subject   string          `json:"subject"`
	Params    postroom.Params `json:"params"`
	// As is "html" (the default) or "text": the part the source is for.
	As string `json:"as"`
}

// templateAnswer is a template in the answers, in Mandrill's names.
type templateAnswer struct {
	Name string `json:"name"`
	Slug string `json:"slug"`
	// Code is the draft; PublishCode the live version, null when the
	// template was never published.
	Code           string     `json:"code"`
	PublishCode    *string    `json:"publish_code"`
	PublishVersion int        `json:"publish_version,omitempty"`
	PublishedAt    *time.Time `json:"published_at"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	// Versions are the kept published versions, newest first: info and
	// delete only.
	Versions []versionAnswer `json:"versions,omitempty"`
}

// versionAnswer is one published version in a templateAnswer.
type versionAnswer struct {
	Version     int       `json:"version"`
	Code        string    `json:"code"`
	PublishedAt time.Time `json:"published_at"`
	FromVersion int       `json:"from_version,omitempty"`
}

// renderAnswer is the answer of templates.render.
type renderAnswer struct {
	Subject string `json:"subject"`
	HTML    string `json:"html,omitempty"`
	Text    string `json:"text,omitempty"`
	// Missing are the params the source references that the request's
	// params lack.
	Missing []string `json:"missing"`
}

// templateErrorAnswer is the answer for a template that does not
// compile: the error body, with the position.
type templateErrorAnswer struct {
	*apiError
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
}

// answerOf returns t as an answer.
func answerOf(t *templatestore.Template) templateAnswer {
	a := templateAnswer{Name: t.ID, Slug: t.ID, Code: t.Draft, CreatedAt: t.Created, UpdatedAt: t.Updated}
	if p := t.Published; p != nil {
		a.PublishCode, a.PublishVersion, a.PublishedAt = &p.Source, p.Version, &p.Published
	}
	for _, v := range t.Versions {
		a.Versions = append(a.Versions, versionAnswer{Version: v.Version, Code: v.Source, PublishedAt: v.Published, FromVersion: v.From})
	}
	return a
}

// mountTemplates serves the templates endpoints on mux over store, with
// the keys of m's Options.Auth; a source is compiled by m before it is
// saved.
func (h *Handler) mountTemplates(mux *http.ServeMux, m *postroom.Mailer, store templatestore.Manager) {
	save := func(add bool) func(ctx context.Context, req *templateSaveRequest) (any, error) {
		return func(ctx context.Context, req *templateSaveRequest) (any, error) {
			if req.Text != "" {
				return nil, &postroom.ValidationError{Field: "text", Reason: "a template holds one source, in code: store the text version as a template of its own (such as \"" + req.Name + ".txt\") and name it in message.text_template_id"}
			}
			if req.Code == "" {
				return nil, &postroom.ValidationError{Field: "code", Reason: "empty: give the template's source"}
			}
			if err := m.CheckTemplate(ctx, req.Code); err != nil {
				return nil, err
			}
			var t *templatestore.Template
			var err error
			if add {
				t, err = store.Add(ctx, req.AccountID, req.Name, req.Code, req.Publish)
			} else {
				t, err = store.Update(ctx, req.AccountID, req.Name, req.Code, req.Publish)
			}
			if err != nil {
				return nil, err
			}
			return answerOf(t), nil
		}
	}
	mux.Handle(TemplatesAddPath, templatesEndpoint(m, "templates.add", save(true)))
	mux.Handle(TemplatesUpdatePath, templatesEndpoint(m, "templates.update", save(false)))
	mux.Handle(TemplatesPublishPath, templatesEndpoint(m, "templates.publish", func(ctx context.Context, req *templatePublishRequest) (any, error) {
		var t *templatestore.Template
		var err error
		switch {
		case req.Version < 0:
			return nil, &postroom.ValidationError{Field: "version", Reason: "negative: give a kept version's number, or 0 for the draft"}
		case req.Version > 0:
			t, err = store.PublishVersion(ctx, req.AccountID, req.Name, req.Version)
		default:
			t, err = store.Publish(ctx, req.AccountID, req.Name)
		}
		if err != nil {
			return nil, err
		}
		return answerOf(t), nil
	}))
	mux.Handle(TemplatesDeletePath, templatesEndpoint(m, "templates.delete", func(ctx context.Context, req *templateNameRequest) (any, error) {
		t, err := store.Remove(ctx, req.AccountID, req.Name)
		if err != nil {
			return nil, err
		}
		return answerOf(t), nil
	}))
	mux.Handle(TemplatesInfoPath, templatesEndpoint(m, "templates.info", func(ctx context.Context, req *templateNameRequest) (any, error) {
		t, err := store.Info(ctx, req.AccountID, req.Name)
		if err != nil {
			return nil, err
		}
		return answerOf(t), nil
	}))
	mux.Handle(TemplatesListPath, templatesEndpoint(m, "templates.list", func(ctx context.Context, req *templateListRequest) (any, error) {
		list, err := store.List(ctx, req.AccountID)
		if err != nil {
			return nil, err
		}
		out := make([]templateAnswer, len(list))
		for i := range list {
			out[i] = answerOf(&list[i])
		}
		return out, nil
	}))
	mux.Handle(TemplatesRenderPath, templatesEndpoint(m, "templates.render", func(ctx context.Context, req *templateRenderRequest) (any, error) {
		return render(ctx, m, store, req)
	}))
}

// render is templates.render: the draft, the live version or the given
// code, rendered by m for the request's params.
func render(ctx context.Context, m *postroom.Mailer, store templatestore.Manager, req *templateRenderRequest) (any, error) {
	src := req.Code
	switch {
	case req.Name == "" && req.Code == "":
		return nil, &postroom.ValidationError{Field: "name", Reason: "give the template's name, or its source in code"}
	case req.Name != "" && req.Code != "":
		return nil, &postroom.ValidationError{Field: "code", Reason: "give the template's name or its source in code, not both"}
	case req.Name != "":
		t, err := store.Info(ctx, req.AccountID, req.Name)
		if err != nil {
			return nil, err
		}
		src = t.Draft
		if req.Published {
			if t.Published == nil {
				return nil, &postroom.ValidationError{Field: "published", Reason: fmt.Sprintf("template %q was never published", req.Name)}
			}
			src = t.Published.Source
		}
	}
	if err := m.CheckTemplate(ctx, src); err != nil {
		return nil, err
	}
	sample := postroom.TemplateSample{AccountID: req.AccountID, Key: req.Key, Subject: req.Subject, Params: req.Params}
	switch req.As {
	case "", "html":
		sample.HTML = src
	case "text":
		sample.Text = src
	default:
		return nil, &postroom.ValidationError{Field: "as", Reason: fmt.Sprintf("%q: want html or text", req.As)}
	}
	r, err := m.RenderTemplate(ctx, sample)
	if err != nil {
		return nil, err
	}
	if r.Result.Status == postroom.StatusInvalid {
		return nil, &postroom.ValidationError{Field: "params", Reason: "the template does not render: " + r.Result.Reason}
	}
	a := renderAnswer{Subject: r.Subject, HTML: r.HTML, Text: r.Text, Missing: r.Missing}
	if a.Missing == nil {
		a.Missing = []string{}
	}
	return a, nil
}

// templatesEndpoint serves one templates endpoint, named name in the log,
// as accountEndpoint does, with the templates' errors: a template that does not compile
// is 400 template_syntax with its "line" and "column"; a missing template
// 404 unknown_template, a version not kept 404 unknown_version, a name
// taken 409 template_exists; an invalid name 400 validation_error naming
// "name", a source the store refuses one naming "code".
func templatesEndpoint[Req any, PReq interface {
	*Req
	auth() rejectsAuth
}](m *postroom.Mailer, name string, run func(ctx context.Context, req PReq) (any, error)) http.HandlerFunc {
	return accountEndpoint(m, maxTemplatesBody,
		func(ctx context.Context, _ http.ResponseWriter, req PReq) (any, error) { return run(ctx, req) },
		func(w http.ResponseWriter, err error) { writeTemplatesError(w, name, err) })
}

// writeTemplatesError answers an error of a templates endpoint named name.
func writeTemplatesError(w http.ResponseWriter, name string, err error) {
	var te *postroom.TemplateError
	if errors.As(err, &te) {
		e := &apiError{Status: "error", Code: "template_syntax", Message: "code: " + te.Error(), Field: "code"}
		addLogAttrs(w, slog.String("code", e.Code), slog.String("field", e.Field))
		_ = writeJSON(w, http.StatusBadRequest, templateErrorAnswer{apiError: e, Line: te.Line, Column: te.Column})
		return
	}
	switch {
	case errors.Is(err, templatestore.ErrInvalidID):
		writeValidationError(w, &postroom.ValidationError{Field: "name", Reason: "a template name is 1 to 255 of A-Z a-z 0-9 . _ - (not . or ..)"})
		return
	case errors.Is(err, templatestore.ErrInvalidSource):
		writeValidationError(w, &postroom.ValidationError{Field: "code", Reason: "not UTF-8 text without NUL"})
		return
	case errors.Is(err, templatestore.ErrExists):
		writeError(w, http.StatusConflict, &apiError{Code: "template_exists", Message: "a template of this name exists in this account: change it with templates.update", Field: "name"})
		return
	case errors.Is(err, templatestore.ErrVersionNotFound):
		writeError(w, http.StatusNotFound, &apiError{Code: "unknown_version", Message: "the template keeps no such version: templates.info lists them", Field: "version"})
		return
	case errors.Is(err, postroom.ErrTemplateNotFound) && postroom.ValidationErrors(err) == nil:
		writeError(w, http.StatusNotFound, &apiError{Code: "unknown_template", Message: "no such template in this account", Field: "name"})
		return
	case errors.Is(err, postroom.ErrUnauthorized):
		status, e := callError(err)
		writeError(w, status, e)
		return
	}
	if ves := postroom.ValidationErrors(err); ves != nil {
		status, e := callError(err)
		writeError(w, status, e)
		return
	}
	logError(w, slog.LevelError, fmt.Sprintf("%s: %v", name, err))
	writeError(w, http.StatusInternalServerError, &apiError{Code: "internal", Message: "internal error"})
}
