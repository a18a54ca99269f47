package preview

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/option"
)

// Defaults of the Options limits.
const (
	DefaultMaxBodyBytes  = 32 << 20
	DefaultMaxRecipients = 20
	DefaultShown         = 5
	DefaultMaxListed     = 1000
)

// Options configures a Handler. New copies it. Each field says what its
// zero value means; New refuses a negative number.
type Options struct {
	// MaxBodyBytes is the largest call body accepted, pasted or uploaded;
	// a larger request is refused with 413. Zero means
	// DefaultMaxBodyBytes (32 MiB).
	MaxBodyBytes int64

	// MaxRecipients is the most recipients previewed per request; the
	// recipients picked beyond it are listed but not rendered. Zero means
	// DefaultMaxRecipients (20).
	MaxRecipients int

	// Shown is how many recipients, from the first, are previewed when
	// none is picked. Zero means DefaultShown (5).
	Shown int

	// MaxListed is the most recipients listed for picking (the others can
	// still be picked by index). Zero means DefaultMaxListed (1000).
	MaxListed int

	// Logger receives the errors the page does not show (a template store that
	// failed). Nil discards every record (slog.New(slog.DiscardHandler)), as
	// for every Logger of the module (package option).
	Logger *slog.Logger
}

// Handler serves the preview page. Make one with New; it is immutable and
// safe for concurrent use.
type Handler struct {
	m    *postroom.Mailer
	opts Options
	mux  *http.ServeMux
}

//go:embed page.html style.css
var assets embed.FS

var page = template.Must(template.ParseFS(assets, "page.html"))

// opNew is New's name in its *option.Error.
const opNew = "preview.New"

// setDefaults gives every zero field of o its default by the module's
// rule (package option): zero means the default, and a negative value is
// an *option.Error. A nil Logger discards.
func (o *Options) setDefaults() error {
	if err := option.Default(opNew, "Options.MaxBodyBytes", &o.MaxBodyBytes, DefaultMaxBodyBytes); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxRecipients", &o.MaxRecipients, DefaultMaxRecipients},
		{"Shown", &o.Shown, DefaultShown},
		{"MaxListed", &o.MaxListed, DefaultMaxListed},
	} {
		if err := option.Default(opNew, "Options."+f.name, f.v, f.def); err != nil {
			return err
		}
	}
	o.Logger = option.Logger(o.Logger)
	return nil
}

// New returns a Handler that previews calls with m. It validates opts.
func New(m *postroom.Mailer, opts Options) (*Handler, error) {
	if m == nil {
		return nil, errors.New("preview: New: nil Mailer")
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	h := &Handler{m: m, opts: opts, mux: http.NewServeMux()}
	css, _ := assets.ReadFile("style.css")
	h.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		h.render(w, &pageData{form: form{Op: "send"}})
	})
	h.mux.Handle("POST /{$}", http.NewCrossOriginProtection().Handler(http.HandlerFunc(h.post)))
	h.mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(css)
	})
	return h, nil
}

// contentPolicy allows the page its own stylesheet, inline styles and
// data: images, and nothing else: no script, no other origin. The
// sandboxed iframe's srcdoc document inherits it.
const contentPolicy = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src data:; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'self'"

// ServeHTTP serves the page (GET and POST on the root) and its stylesheet.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "SAMEORIGIN")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store") // the page holds recipients' data
	h.mux.ServeHTTP(w, r)
}

// post previews the call of a submitted form.
func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes+1<<20)
	// The whole form is kept in memory (it is bounded above), so that no
	// upload is spooled to a temporary file.
	err := r.ParseMultipartForm(h.opts.MaxBodyBytes + 1<<20)
	if errors.Is(err, http.ErrNotMultipart) {
		err = r.ParseForm()
	}
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			http.Error(w, "the call is larger than the preview accepts", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	f := form{
		Body:           r.PostFormValue("body"),
		Op:             r.PostFormValue("op"),
		AccountID:      strings.TrimSpace(r.PostFormValue("account_id")),
		HTMLTemplateID: strings.TrimSpace(r.PostFormValue("html_template_id")),
		TextTemplateID: strings.TrimSpace(r.PostFormValue("text_template_id")),
		Pick:           r.PostFormValue("recipients"),
		Picked:         r.PostForm["r"],
	}
	if file, _, err := r.FormFile("file"); err == nil {
		b, err := io.ReadAll(file)
		file.Close()
		if err != nil {
			http.Error(w, "the uploaded file could not be read", http.StatusBadRequest)
			return
		}
		if len(bytes.TrimSpace(b)) > 0 {
			f.Body = string(b)
		}
	}
	if int64(len(f.Body)) > h.opts.MaxBodyBytes {
		http.Error(w, "the call is larger than the preview accepts", http.StatusRequestEntityTooLarge)
		return
	}
	h.render(w, h.preview(r.Context(), &f))
}

// render writes the page for d.
func (h *Handler) render(w http.ResponseWriter, d *pageData) {
	var b bytes.Buffer
	if err := page.Execute(&b, d); err != nil {
		h.opts.Logger.Error("preview: page", slog.Any("error", err))
		http.Error(w, "the page could not be made", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.Write(b.Bytes())
}
