package main

// The stored templates: templates add, update, publish, list, info,
// render, delete.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// templatesFlags are the flags of the templates commands.
type templatesFlags struct {
	common
	account, name, file, params, subject string
	publish, published, text, noCheck    bool
	version, keep                        int
}

func runTemplates(ctx context.Context, e *env, args []string) error {
	const want = "want add, update, publish, list, info, render or delete"
	if len(args) == 0 {
		return usagef("%s", want)
	}
	if isHelp(args[0]) {
		fmt.Fprintln(e.stderr, "usage: postroom templates add|update|publish|list|info|render|delete [flags]\n\nRun 'postroom templates <command> -h' for each one's flags.")
		return errHelp
	}
	var f templatesFlags
	fs := newFlags(e, "templates "+args[0], "", &f.common)
	fs.StringVar(&f.account, "account", "", "the account (required)")
	name := func() {
		fs.StringVar(&f.name, "name", "", "the template's id, as calls name it in html_template_id or text_template_id (required)")
	}
	keep := func() {
		fs.IntVar(&f.keep, "keep-versions", templatestore.DefaultKeepVersions, "published versions kept of the template: publishing forgets older ones (use the application's templatestore.SQL KeepVersions)")
	}
	switch args[0] {
	case "add", "update":
		name()
		keep()
		fs.StringVar(&f.file, "file", "", "the file holding the template's source (required)")
		fs.BoolVar(&f.publish, "publish", false, "publish it at once: calls use it from now on (default: a draft, which publish makes live)")
		fs.BoolVar(&f.noCheck, "no-check", false, "save it without compiling it first (for a template calling the application's own helpers, which this command does not know)")
	case "publish":
		name()
		keep()
		fs.IntVar(&f.version, "version", 0, "publish this kept version again (a rollback) rather than the draft")
	case "info", "delete":
		name()
	case "list":
	case "render":
		fs.StringVar(&f.name, "name", "", "the stored template to render (its draft, or with -published its live version)")
		fs.StringVar(&f.file, "file", "", "a file holding a source to render, instead of -name")
		fs.BoolVar(&f.published, "published", false, "render the live version rather than the draft")
		fs.StringVar(&f.params, "params", "", "a JSON file holding the recipient's params, an object")
		fs.StringVar(&f.subject, "subject", "", "a subject template to render with it")
		fs.BoolVar(&f.text, "text", false, "render it as a text body (not HTML-escaped) rather than as html")
	default:
		return usagef("unknown templates command %q: %s", args[0], want)
	}
	if _, err := parse(fs, args[1:], 0); err != nil {
		return err
	}
	if err := f.check(args[0]); err != nil {
		return err
	}
	pool, err := f.open(ctx, e)
	if err != nil {
		return err
	}
	defer pool.Close()
	store := &templatestore.SQL{DB: pgxdb.New(pool), KeepVersions: f.keep}
	// The Mailer compiles and renders as the application's would, with
	// postroom's helpers only; it sends nothing.
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}, Templates: store})
	if err != nil {
		return err
	}
	return f.run(ctx, e, args[0], store, m)
}

// check refuses a command line missing what the command needs.
func (f *templatesFlags) check(cmd string) error {
	switch {
	case f.account == "":
		return usagef("-account is required")
	case cmd != "list" && cmd != "render" && f.name == "":
		return usagef("-name is required")
	case (cmd == "add" || cmd == "update") && f.file == "":
		return usagef("-file is required")
	case cmd == "render" && (f.name == "") == (f.file == ""):
		return usagef("give -name or -file")
	case cmd == "render" && f.published && f.name == "":
		return usagef("-published renders a stored template: give -name")
	case f.version < 0:
		return usagef("-version is negative")
	case f.keep < 0:
		return usagef("-keep-versions is negative")
	}
	return nil
}

func (f *templatesFlags) run(ctx context.Context, e *env, cmd string, store *templatestore.SQL, m *postroom.Mailer) error {
	var (
		t   *templatestore.Template
		err error
	)
	switch cmd {
	case "add", "update":
		source, err := f.source(ctx, m)
		if err != nil {
			return err
		}
		if cmd == "add" {
			t, err = store.Add(ctx, f.account, f.name, source, f.publish)
		} else {
			t, err = store.Update(ctx, f.account, f.name, source, f.publish)
		}
		if err != nil {
			return templatesError(err)
		}
	case "publish":
		if f.version > 0 {
			t, err = store.PublishVersion(ctx, f.account, f.name, f.version)
		} else {
			t, err = store.Publish(ctx, f.account, f.name)
		}
	case "info":
		t, err = store.Info(ctx, f.account, f.name)
	case "delete":
		t, err = store.Remove(ctx, f.account, f.name)
	case "list":
		return f.list(ctx, e, store)
	case "render":
		return f.render(ctx, e, store, m)
	}
	if err != nil {
		return templatesError(err)
	}
	if f.json {
		return printJSON(e.stdout, t)
	}
	switch cmd {
	case "delete":
		fmt.Fprintf(e.stdout, "deleted template %s of account %s, with its %d published versions\n", t.ID, t.AccountID, len(t.Versions))
		return nil
	case "add":
		fmt.Fprintf(e.stdout, "added ")
	case "update":
		fmt.Fprintf(e.stdout, "updated ")
	case "publish":
		fmt.Fprintf(e.stdout, "published ")
	}
	printTemplate(e, t)
	return nil
}

// source reads -file and, unless -no-check, compiles it with m: a source
// that does not compile is refused as FILE:LINE:COLUMN: reason.
func (f *templatesFlags) source(ctx context.Context, m *postroom.Mailer) (string, error) {
	data, err := os.ReadFile(f.file)
	if err != nil {
		return "", err
	}
	source := string(data)
	if f.noCheck {
		return source, nil
	}
	if err := check(ctx, m, f.file, source); err != nil {
		return "", fmt.Errorf("%w (nothing saved)", err)
	}
	return source, nil
}

// check compiles source, read from where, with m: a source that does not
// compile is refused as WHERE:LINE:COLUMN: reason, as compilers write it.
func check(ctx context.Context, m *postroom.Mailer, where, source string) error {
	var te *postroom.TemplateError
	switch err := m.CheckTemplate(ctx, source); {
	case errors.As(err, &te) && te.Line > 0:
		return fmt.Errorf("%s:%d:%d: %s", where, te.Line, te.Column, te.Reason)
	case errors.As(err, &te):
		return fmt.Errorf("%s: %s", where, te.Reason)
	default:
		return err
	}
}

func (f *templatesFlags) list(ctx context.Context, e *env, store *templatestore.SQL) error {
	list, err := store.List(ctx, f.account)
	if err != nil {
		return templatesError(err)
	}
	if f.json {
		if list == nil {
			list = []templatestore.Template{}
		}
		return printJSON(e.stdout, struct {
			Templates []templatestore.Template `json:"templates"`
		}{list})
	}
	for i := range list {
		printTemplate(e, &list[i])
	}
	return nil
}

// renderOutput is what render prints with -json.
type renderOutput struct {
	Subject string   `json:"subject"`
	HTML    string   `json:"html,omitempty"`
	Text    string   `json:"text,omitempty"`
	Missing []string `json:"missing"`
}

func (f *templatesFlags) render(ctx context.Context, e *env, store *templatestore.SQL, m *postroom.Mailer) error {
	source, where := "", f.file
	if f.name != "" {
		t, err := store.Info(ctx, f.account, f.name)
		if err != nil {
			return templatesError(err)
		}
		source = t.Draft
		if f.published {
			if t.Published == nil {
				return fmt.Errorf("template %s of account %s was never published", f.name, f.account)
			}
			source = t.Published.Source
		}
		where = f.name
	} else {
		data, err := os.ReadFile(f.file)
		if err != nil {
			return err
		}
		source = string(data)
	}
	sample := postroom.TemplateSample{AccountID: f.account, Subject: f.subject}
	if f.text {
		sample.Text = source
	} else {
		sample.HTML = source
	}
	if f.params != "" {
		data, err := os.ReadFile(f.params)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &sample.Params); err != nil {
			return fmt.Errorf("-params %s: %w", f.params, err)
		}
	}
	if err := check(ctx, m, where, source); err != nil {
		return err
	}
	r, err := m.RenderTemplate(ctx, sample)
	if err != nil {
		return err
	}
	if r.Result.Status == postroom.StatusInvalid {
		return fmt.Errorf("it does not render: %s", r.Result.Reason)
	}
	out := renderOutput{Subject: r.Subject, HTML: r.HTML, Text: r.Text, Missing: r.Missing}
	if f.json {
		if out.Missing == nil {
			out.Missing = []string{}
		}
		return printJSON(e.stdout, out)
	}
	if f.subject != "" {
		fmt.Fprintf(e.stdout, "Subject: %s\n\n", out.Subject)
	}
	body := out.HTML
	if f.text {
		body = out.Text
	}
	fmt.Fprintln(e.stdout, strings.TrimRight(body, "\n"))
	if len(out.Missing) > 0 {
		fmt.Fprintf(e.stderr, "missing params: %s\n", strings.Join(out.Missing, ", "))
	}
	return nil
}

// printTemplate writes one line about t, then one per kept version.
func printTemplate(e *env, t *templatestore.Template) {
	line := fmt.Sprintf("%s  draft of %s", t.ID, t.Updated.UTC().Format(time.RFC3339))
	if p := t.Published; p != nil {
		line += fmt.Sprintf(", live version %d of %s", p.Version, p.Published.UTC().Format(time.RFC3339))
		if p.From > 0 {
			line += fmt.Sprintf(" (version %d again)", p.From)
		}
		if t.Draft != p.Source {
			line += ", draft not published"
		}
	} else {
		line += ", never published"
	}
	fmt.Fprintln(e.stdout, line)
	for _, v := range t.Versions {
		line := fmt.Sprintf("  version %d  published %s", v.Version, v.Published.UTC().Format(time.RFC3339))
		if v.From > 0 {
			line += fmt.Sprintf("  (version %d again)", v.From)
		}
		fmt.Fprintln(e.stdout, line)
	}
}

// templatesError says what a store's error means for the command line.
func templatesError(err error) error {
	switch {
	case errors.Is(err, templatestore.ErrInvalidID):
		return fmt.Errorf("%w (an id is 1 to 255 of A-Z a-z 0-9 . _ -)", err)
	case errors.Is(err, templatestore.ErrExists):
		return fmt.Errorf("%w: change it with templates update", err)
	case errors.Is(err, templatestore.ErrVersionNotFound):
		return fmt.Errorf("%w: templates info lists the versions kept", err)
	}
	return err
}
