package main

// For template authors: preview and send -dry-run of a call body file.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// callFile is a call body file and the Mailer that previews it.
type callFile struct {
	op   postroom.Operation
	call *postroom.Call
	m    *postroom.Mailer
	db   *pgxpool.Pool // the stored templates' database, or nil
}

func (f *callFile) close() {
	if f.db != nil {
		f.db.Close()
	}
}

// previewFlags are the flags of preview and send.
type previewFlags struct {
	common
	recipients string
	strict     bool
	show       string // preview's -show: "", "text" or "html"
}

func (p *previewFlags) add(e *env, name string) *flag.FlagSet {
	fs := newFlags(e, name, "FILE.json", &p.common)
	fs.StringVar(&p.recipients, "recipients", "", "indices of the recipients to preview, comma-separated (default all)")
	fs.BoolVar(&p.strict, "strict", false, "make a recipient with missing params invalid (Options.StrictParams)")
	return fs
}

// refusedError is a preview -strict or send -dry-run that found
// recipients who would be refused: exit status 1, so that either can
// gate a build.
func refusedError(refused, total int) error {
	return &failure{msg: fmt.Sprintf("%d of %d recipients would be refused", refused, total)}
}

// refused reports whether a recipient of status st would be refused: no
// message would be made for it.
func refused(st string) bool {
	return st != string(postroom.StatusSent) && st != string(postroom.StatusQueued)
}

// load reads and decodes the call body file (DecodeCall, as an HTTP
// handler does) and makes a Mailer for it over a Memory transport, which
// never sends; a message.send_template call reads its templates from the
// database.
func (p *previewFlags) load(ctx context.Context, e *env, name string) (*callFile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	call, err := postroom.DecodeCall(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &callFile{op: postroom.OpSend, call: call}
	opts := postroom.Options{Auth: postroom.NoAuth{}, StrictParams: p.strict}
	if call.Message.HTMLTemplateID != "" || call.Message.TextTemplateID != "" {
		f.op = postroom.OpSendTemplate
		pool, err := p.open(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("message.send_template reads its stored templates from the database: %w", err)
		}
		f.db = pool
		opts.Templates = templatestore.NewSQL(pgxdb.New(pool))
	}
	if f.m, err = postroom.New(transport.NewMemory(), opts); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// indices parses -recipients.
func (p *previewFlags) indices() ([]int, error) {
	if p.recipients == "" {
		return nil, nil
	}
	var idx []int
	for _, s := range strings.Split(p.recipients, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || i < 0 {
			return nil, usagef("-recipients: %q is not an index", s)
		}
		idx = append(idx, i)
	}
	return idx, nil
}

// recipientView is one previewed recipient in the JSON output.
type recipientView struct {
	Index   int      `json:"index"`
	Email   string   `json:"email"`
	Status  string   `json:"status"`
	Code    string   `json:"code,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Subject string   `json:"subject,omitempty"`
	Missing []string `json:"missing,omitempty"`
	// Text and HTML are the rendered bodies, with preview -show text or
	// -show html only.
	Text string `json:"text,omitempty"`
	HTML string `json:"html,omitempty"`
}

// views returns the previewed recipients; show ("text" or "html") adds
// that rendered body.
func views(call *postroom.Call, pv *postroom.Preview, show string) []recipientView {
	out := make([]recipientView, len(pv.Recipients))
	for k, r := range pv.Recipients {
		out[k] = recipientView{
			Index: r.Index, Email: call.Recipients[r.Index].Email,
			Status: string(r.Result.Status), Code: string(r.Result.Code), Reason: r.Result.Reason,
			Subject: r.Subject, Missing: r.Missing,
		}
		switch show {
		case "text":
			out[k].Text = r.Text
		case "html":
			out[k].HTML = r.HTML
		}
	}
	return out
}

// printViews writes the previewed recipients as text: ok for one whose
// message would be made, refused with its status and reason otherwise.
// With show ("text" or "html"), each recipient's rendered body follows,
// its lines indented by four spaces ("(none)" when it has none).
func printViews(w io.Writer, vs []recipientView, show string) {
	for _, v := range vs {
		line := fmt.Sprintf("%d %s: ok", v.Index, v.Email)
		if refused(v.Status) {
			line = fmt.Sprintf("%d %s: refused, %s", v.Index, v.Email, v.Status)
		}
		if v.Reason != "" {
			line += " (" + v.Reason + ")"
		}
		if v.Subject != "" {
			line += "\n  subject: " + v.Subject
		}
		if len(v.Missing) > 0 {
			line += "\n  missing params: " + strings.Join(v.Missing, ", ")
		}
		if show != "" {
			body := v.Text
			if show == "html" {
				body = v.HTML
			}
			line += "\n  " + show + ":"
			if body == "" {
				line += " (none)"
			} else {
				for _, l := range strings.Split(strings.TrimRight(body, "\r\n"), "\n") {
					line += "\n    " + strings.TrimSuffix(l, "\r")
				}
			}
		}
		fmt.Fprintln(w, line)
	}
}

func runPreview(ctx context.Context, e *env, args []string) error {
	var p previewFlags
	fs := p.add(e, "preview")
	fs.StringVar(&p.show, "show", "", "also print each recipient's rendered body: text or html")
	rest, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if p.show != "" && p.show != "text" && p.show != "html" {
		return usagef("-show %q: want text or html", p.show)
	}
	idx, err := p.indices()
	if err != nil {
		return err
	}
	f, err := p.load(ctx, e, rest[0])
	if err != nil {
		return err
	}
	defer f.close()
	pv, err := f.m.Preview(ctx, f.op, f.call, postroom.PreviewOptions{Recipients: idx})
	if err != nil {
		return err
	}
	vs := views(f.call, pv, p.show)
	n := 0
	for _, v := range vs {
		if refused(v.Status) {
			n++
		}
	}
	if p.json {
		if err := printJSON(e.stdout, map[string]any{"operation": f.op.String(), "recipients": vs, "refused": n}); err != nil {
			return err
		}
	} else {
		printViews(e.stdout, vs, p.show)
	}
	if p.strict && n > 0 {
		return refusedError(n, len(vs))
	}
	return nil
}

// errSendRefused is send's answer without -dry-run.
const sendRefused = "this command sends no mail: use -dry-run to check a call; to send, enqueue it from the application (outbox.Enqueue) or POST it to its HTTP API"

func runSend(ctx context.Context, e *env, args []string) error {
	var p previewFlags
	var dry bool
	fs := p.add(e, "send")
	fs.BoolVar(&dry, "dry-run", false, "check the call (validation, suppressions, rendering) and send nothing")
	rest, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if !dry {
		return usagef("%s", sendRefused)
	}
	idx, err := p.indices()
	if err != nil {
		return err
	}
	f, err := p.load(ctx, e, rest[0])
	if err != nil {
		return err
	}
	defer f.close()
	// Validate: the checks Run makes before rendering, with the call's
	// refusals as errors; then Preview renders what Validate let through.
	checked, err := f.m.Validate(ctx, f.op, f.call)
	if err != nil {
		return err
	}
	pv, err := f.m.Preview(ctx, f.op, f.call, postroom.PreviewOptions{Recipients: idx})
	if err != nil {
		return err
	}
	vs := views(f.call, pv, "")
	refused := 0
	for _, r := range checked {
		if r.Status != "" {
			refused++
		}
	}
	for _, v := range vs {
		if v.Status == string(postroom.StatusInvalid) && checked[v.Index].Status == "" {
			refused++ // refused at rendering (a missing param under -strict, a render error)
		}
	}
	if p.json {
		if err := printJSON(e.stdout, map[string]any{"operation": f.op.String(), "dry_run": true, "recipients": vs, "refused": refused}); err != nil {
			return err
		}
	} else {
		printViews(e.stdout, vs, "")
		fmt.Fprintf(e.stdout, "dry run: %d recipients, %d would be refused; nothing was sent\n", len(f.call.Recipients), refused)
	}
	if refused > 0 {
		return refusedError(refused, len(f.call.Recipients))
	}
	return nil
}
