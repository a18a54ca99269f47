package postroom

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Mailer sends calls: it authenticates and validates them, renders every
// recipient's message and hands it to its Transport. A Mailer is immutable
// and safe for concurrent use; each call's state lives in that call.
type Mailer struct {
	t      Transport
	opts   Options
	queued bool
	// workers pools the render workers' buffers across calls. It is the
	// one thing a Mailer changes after New, and it is invisible: a buffer
	// holds nothing from one recipient to the next.
	workers sync.Pool
}

// New returns a Mailer that delivers through t. It validates opts and fills
// in the defaults of its zero fields.
func New(t Transport, opts Options) (*Mailer, error) {
	if t == nil {
		return nil, errors.New("postroom: New: nil Transport")
	}
	if opts.Auth == nil {
		return nil, errors.New("postroom: New: Options.Auth is nil: use postroom.StaticKeys to check keys, or postroom.NoAuth{} if the application authenticates callers itself")
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"Concurrency", &opts.Concurrency, max(8, 4*runtime.GOMAXPROCS(0))},
		{"MaxRecipients", &opts.MaxRecipients, DefaultMaxRecipients},
		{"MaxMessageBytes", &opts.MaxMessageBytes, DefaultMaxMessageBytes},
		{"MaxBCC", &opts.MaxBCC, DefaultMaxBCC},
		{"MaxHeaders", &opts.MaxHeaders, DefaultMaxHeaders},
		{"MaxTemplateBytes", &opts.MaxTemplateBytes, DefaultMaxTemplateBytes},
		{"MaxTemplateDepth", &opts.MaxTemplateDepth, DefaultMaxTemplateDepth},
		{"MaxRenderBytes", &opts.MaxRenderBytes, DefaultMaxRenderBytes},
		{"MaxRenderSteps", &opts.MaxRenderSteps, DefaultMaxRenderSteps},
	} {
		switch {
		case *f.v < 0:
			return nil, fmt.Errorf("postroom: New: Options.%s is negative (%d)", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	m := &Mailer{t: t, opts: opts}
	if q, ok := t.(Queuer); ok && q.Queued() {
		m.queued = true
	}
	return m, nil
}

// Send is message.send: it sends call.Message's html and text to every
// recipient. It returns exactly one Result per recipient, in input order,
// or a call-level error and no results when the call is refused before
// anything is sent (ErrUnauthorized, ErrNoRecipients, ErrTooManyRecipients,
// *ValidationError, possibly several joined with errors.Join).
//
// When ctx is done mid-call, Send returns the full results (recipients not
// finished are deferred with reason canceled or timeout) together with
// ctx's error. When the transport reports ErrTransportUnusable, Send stops
// handing over messages and returns the full results (recipients not
// handed over are deferred, connection-failed) together with that error.
func (m *Mailer) Send(ctx context.Context, call *Call) ([]Result, error) {
	return m.send(ctx, call, false)
}

// SendTemplate is message.send_template: like Send, with the html and text
// bodies taken from Options.Templates by message.html_template_id and
// message.text_template_id, in the call's account.
func (m *Mailer) SendTemplate(ctx context.Context, call *Call) ([]Result, error) {
	return m.send(ctx, call, true)
}

func (m *Mailer) send(ctx context.Context, call *Call, stored bool) ([]Result, error) {
	if call == nil {
		return nil, &ValidationError{Field: "call", Reason: "nil"}
	}
	start := time.Now()
	j, err := m.prepare(ctx, call, stored)
	if err != nil {
		return nil, err
	}
	results, err := j.run(ctx)
	if m.opts.Logger.Enabled(ctx, slog.LevelDebug) {
		counts := map[Status]int{}
		for _, r := range results {
			counts[r.Status]++
		}
		m.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "postroom call",
			slog.String("account_id", call.AccountID),
			slog.Int("recipients", len(results)),
			slog.Any("statuses", counts),
			slog.Duration("elapsed", time.Since(start)),
			slog.Any("error", err))
	}
	return results, err
}

// job is one call, prepared: everything that is the same for every
// recipient, computed once and read-only while the workers run.
type job struct {
	m          *Mailer
	call       *Call
	tpl        *templates
	skel       *skeleton
	from       string // envelope reverse path
	fromDomain string
	bcc        []string
	ids        cipher.Block // send ids: AES of (nonce, index), unique within the call
	nonce      uint64
	// normalized holds the address of the few recipients whose address for
	// SMTP differs from their email with spaces trimmed (an IDN or
	// upper-case domain). Written by checkRecipients, read-only after.
	normalized map[int]string
}

// prepare runs every call-level check, in order: auth, recipient count,
// message structure, templates, files, cid references, headers, bcc.
func (m *Mailer) prepare(ctx context.Context, call *Call, stored bool) (*job, error) {
	if err := m.opts.Auth.Authenticate(ctx, call.AccountID, call.Key); err != nil {
		if errors.Is(err, ErrUnauthorized) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	switch n := len(call.Recipients); {
	case n == 0:
		return nil, ErrNoRecipients
	case n > m.opts.MaxRecipients:
		return nil, fmt.Errorf("%w: %d, at most %d", ErrTooManyRecipients, n, m.opts.MaxRecipients)
	}
	msg := &call.Message
	j := &job{m: m, call: call}
	if err := j.checkStructure(msg, stored); err != nil {
		return nil, err
	}

	html := templateSource{"message.html", msg.HTML}
	text := templateSource{"message.text", msg.Text}
	if stored {
		var errs []error
		html, text, errs = m.lookupTemplates(ctx, call)
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
	}
	var errs []error
	tpl, err := m.compileTemplates(ctx, templateSource{"message.subject", msg.Subject}, html, text, msg.Headers)
	if err != nil {
		errs = append(errs, err)
	}
	j.tpl = tpl

	layout := &mimeLayout{
		FromName: msg.FromName, FromAddr: j.from,
		ReplyToName: msg.ReplyToName,
		HasHTML:     html.src != "", HasText: text.src != "",
		MaxSize: m.opts.MaxMessageBytes,
	}
	if msg.ReplyToEmail != "" {
		layout.ReplyToAddr, _ = parseAddress(trimAddress(msg.ReplyToEmail)) // checked in checkStructure
	}
	var ferrs []error
	layout.Images, layout.Attachments, ferrs = decodeFiles(msg, m.opts.MaxMessageBytes)
	errs = append(errs, ferrs...)
	errs = append(errs, checkCIDs(html, msg.Images)...)
	herrs := checkHeaders(msg.Headers, m.opts.MaxHeaders)
	errs = append(errs, herrs...)
	if tpl != nil && len(herrs) == 0 {
		for i, h := range msg.Headers {
			mh := mimeHeader{Name: h.Name, Dynamic: tpl.headers[i] != nil}
			if !mh.Dynamic {
				mh.Value = tpl.headerStatic[i]
			}
			layout.Headers = append(layout.Headers, mh)
		}
		errs = append(errs, checkStaticValues(layout.Headers)...)
	}
	if j.bcc, err = parseBCC(msg.BCC, m.opts.MaxBCC); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	var seed [40]byte
	if _, err := io.ReadFull(m.opts.Rand, seed[:]); err != nil {
		return nil, fmt.Errorf("postroom: reading Options.Rand: %w", err)
	}
	j.ids, _ = aes.NewCipher(seed[:16]) // a 16-byte key cannot fail
	j.nonce = binary.BigEndian.Uint64(seed[16:24])
	boundaries, _ := aes.NewCipher(seed[24:40])
	layout.Date = m.opts.Now()
	j.skel, err = newSkeleton(layout, &streamReader{block: boundaries})
	if err != nil {
		return nil, err
	}
	if n := j.skel.staticSize(); n > m.opts.MaxMessageBytes {
		return nil, &ValidationError{Field: "message", Reason: fmt.Sprintf("images and attachments alone make %d bytes, over the %d-byte message limit", n, m.opts.MaxMessageBytes)}
	}
	return j, nil
}

// checkStructure checks the message fields that need no template or file:
// sender, reply-to, which bodies are given, template engine.
func (j *job) checkStructure(msg *Message, stored bool) error {
	var errs []error
	bad := func(field, reason string, err error) {
		errs = append(errs, &ValidationError{Field: field, Reason: reason, Err: err})
	}
	from, problem := parseAddress(trimAddress(msg.FromEmail))
	if problem != "" {
		bad("message.from_email", problem, nil)
	} else {
		j.from = from
		j.fromDomain = from[strings.LastIndexByte(from, '@')+1:]
	}
	if r := checkName(msg.FromName); r != "" {
		bad("message.from_name", r, nil)
	}
	if msg.ReplyToEmail != "" {
		if _, problem := parseAddress(trimAddress(msg.ReplyToEmail)); problem != "" {
			bad("message.replyto_email", problem, nil)
		}
	} else if msg.ReplyToName != "" {
		bad("message.replyto_name", "given without replyto_email", nil)
	}
	if r := checkName(msg.ReplyToName); r != "" {
		bad("message.replyto_name", r, nil)
	}
	if hasLineBreak(msg.Subject) {
		bad("message.subject", "contains CR, LF or NUL", nil)
	}
	if stored {
		if msg.HTMLTemplateID == "" && msg.TextTemplateID == "" {
			bad("message.html_template_id", "message.send_template needs html_template_id or text_template_id", nil)
		}
		if msg.HTML != "" {
			bad("message.html", "message.send_template takes its html from html_template_id", nil)
		}
		if msg.Text != "" {
			bad("message.text", "message.send_template takes its text from text_template_id", nil)
		}
	} else {
		if msg.HTML == "" && msg.Text == "" {
			bad("message.html", "message.send needs html or text", nil)
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

// lookupTemplates fetches a send_template call's stored bodies.
func (m *Mailer) lookupTemplates(ctx context.Context, call *Call) (html, text templateSource, errs []error) {
	get := func(field, id string) templateSource {
		if id == "" {
			return templateSource{field: field}
		}
		if m.opts.Templates == nil {
			errs = append(errs, &ValidationError{Field: field, Reason: "no template store is configured (Options.Templates)", Err: ErrTemplateNotFound})
			return templateSource{field: field}
		}
		src, err := m.opts.Templates.Template(ctx, call.AccountID, id)
		switch {
		case errors.Is(err, ErrTemplateNotFound):
			errs = append(errs, &ValidationError{Field: field, Reason: fmt.Sprintf("template %q not found", id), Err: err})
		case err != nil:
			errs = append(errs, fmt.Errorf("postroom: template store: %s %q: %w", field, id, err))
		case src == "":
			errs = append(errs, &ValidationError{Field: field, Reason: fmt.Sprintf("template %q is empty", id)})
		}
		return templateSource{field, src}
	}
	html = get("message.html_template_id", call.Message.HTMLTemplateID)
	text = get("message.text_template_id", call.Message.TextTemplateID)
	return html, text, errs
}

// checkRecipients is the first pass over the recipients, in order, as
// duplicates depend on the recipients before: it fills in the results of
// the recipients that are invalid whatever their params, and j.normalized.
// Beyond that it keeps nothing per recipient but the index of addresses
// seen, which the workers do not need.
func (j *job) checkRecipients(results []Result) {
	rs := j.call.Recipients
	first := make(map[string]int32, len(rs))
	j.normalized = map[int]string{}
	set := func(i int, o outcome) { results[i] = o.result(rs[i].Email, "") }
	for i := range rs {
		r := &rs[i]
		trimmed := trimAddress(r.Email)
		addr, problem := parseAddress(trimmed)
		if problem != "" {
			set(i, invalid(ReasonInvalidEmail, problem))
			continue
		}
		if addr != trimmed {
			j.normalized[i] = addr
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

// worker is one render goroutine's reusable state. Mailer.workers keeps
// them between calls, so that their buffers are grown once, not per call.
type worker struct {
	rb      renderBuffers
	msg     []byte
	to      []string
	v       mimeVarying
	env     Envelope
	in, out [aes.BlockSize]byte // send id scratch
}

// run renders and hands over every recipient with bounded concurrency:
// workers take the next index, write results[i] only, and never cancel one
// another. Every goroutine has ended when run returns.
func (j *job) run(ctx context.Context) ([]Result, error) {
	n := len(j.call.Recipients)
	results := make([]Result, n)
	j.checkRecipients(results)
	var next atomic.Int64
	var stop atomic.Pointer[error] // set when the transport is unusable
	var panicked atomic.Pointer[any]
	workers := min(j.m.opts.Concurrency, n)
	var g errgroup.Group
	g.SetLimit(workers)
	for range workers {
		g.Go(func() error {
			defer func() {
				if p := recover(); p != nil {
					panicked.CompareAndSwap(nil, &p)
					err := fmt.Errorf("postroom: worker panicked: %v", p)
					stop.CompareAndSwap(nil, &err)
				}
			}()
			w, _ := j.m.workers.Get().(*worker)
			if w == nil {
				w = new(worker)
			}
			defer j.m.workers.Put(w)
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				r := &j.call.Recipients[i]
				switch {
				case results[i].Status != "":
					// Found invalid by checkRecipients.
				case ctx.Err() != nil:
					results[i] = outcome{status: StatusDeferred, code: contextCode(ctx.Err()), err: ctx.Err()}.result(r.Email, "")
				case stop.Load() != nil:
					results[i] = notAttempted(*stop.Load()).result(r.Email, "")
				default:
					res, err := j.one(ctx, i, w)
					results[i] = res
					if errors.Is(err, ErrTransportUnusable) {
						stopErr := err
						stop.CompareAndSwap(nil, &stopErr)
					}
				}
			}
		})
	}
	_ = g.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p) // a Transport or MIME bug: re-raised on the caller's goroutine
	}
	if err := stop.Load(); err != nil {
		return results, *err
	}
	if err := ctx.Err(); err != nil {
		for _, r := range results {
			if r.Status == StatusDeferred && (r.Code == ReasonCanceled || r.Code == ReasonTimeout) {
				return results, err
			}
		}
	}
	return results, nil
}

// one makes and hands over recipient i's message. The error is the
// transport's, for the caller to notice ErrTransportUnusable.
func (j *job) one(ctx context.Context, i int, w *worker) (Result, error) {
	r := &j.call.Recipients[i]
	res := Result{Email: r.Email}
	addr, ok := j.normalized[i]
	if !ok {
		addr = trimAddress(r.Email) // checked by checkRecipients
	}
	budget := j.m.opts.MaxMessageBytes - j.skel.staticSize()
	if err := j.tpl.render(ctx, &w.rb, j.call.Message.Headers, r.Params, j.call.GlobalParams, j.m.opts.StrictParams, budget); err != nil {
		o := outcomeOf(err)
		if fromContext(err) {
			o = outcome{status: StatusDeferred, code: contextCode(err), err: err}
		}
		j.settle(ctx, i, &res, o)
		return res, nil
	}
	id := j.sendID(i, w)
	w.v = mimeVarying{
		ToName: r.Name, ToAddr: addr,
		Subject:      string(w.rb.subject),
		MessageID:    "<" + id + "@" + j.fromDomain + ">",
		HeaderValues: w.rb.headerVals,
		Text:         w.rb.text, HTML: w.rb.html,
	}
	var err error
	w.msg, err = j.skel.appendMessage(w.msg[:0], &w.v)
	switch {
	case errors.Is(err, errMessageTooLarge):
		j.settle(ctx, i, &res, invalid(ReasonMessageTooLarge, fmt.Sprintf("over %d bytes", j.m.opts.MaxMessageBytes)))
		return res, nil
	case err != nil:
		j.settle(ctx, i, &res, outcomeOf(err))
		return res, nil
	}
	w.to = append(append(w.to[:0], addr), j.bcc...)
	w.env = Envelope{SendID: id, From: j.from, To: w.to, Data: w.msg}
	res.SendID = id
	err = j.m.t.Send(ctx, &w.env)
	j.settle(ctx, i, &res, classify(err, j.m.queued))
	return res, err
}

// sendID is recipient i's send id: the AES encryption of (nonce, i) under a
// key drawn for the call, so ids are unique within a call (AES is a
// permutation), unpredictable, and need no lock.
func (j *job) sendID(i int, w *worker) string {
	binary.BigEndian.PutUint64(w.in[:8], j.nonce)
	binary.BigEndian.PutUint64(w.in[8:], uint64(i))
	j.ids.Encrypt(w.out[:], w.in[:])
	return hex.EncodeToString(w.out[:])
}

// settle fills in res from recipient i's outcome, and logs the error
// behind it when the Result does not show it (a transport's network
// error, a template's failure): at warning level for a delivery, at debug
// level for an invalid recipient, whose cause is the call's content.
func (j *job) settle(ctx context.Context, i int, res *Result, o outcome) {
	*res = o.result(res.Email, res.SendID)
	if !o.hidden || o.err == nil {
		return
	}
	level := slog.LevelWarn
	if o.status == StatusInvalid {
		level = slog.LevelDebug
	}
	if log := j.m.opts.Logger; log.Enabled(ctx, level) {
		log.LogAttrs(ctx, level, "postroom recipient",
			slog.Int("recipient", i),
			slog.String("send_id", res.SendID),
			slog.String("status", string(o.status)),
			slog.String("reason", res.Reason),
			slog.Any("error", o.err))
	}
}

// streamReader is a counter-mode stream under a key drawn from
// Options.Rand, so that the MIME boundaries come from the call's one read of
// Options.Rand.
type streamReader struct {
	block cipher.Block
	n     uint64
}

func (s *streamReader) Read(p []byte) (int, error) {
	var in, out [16]byte
	written := 0
	for written < len(p) {
		binary.BigEndian.PutUint64(in[8:], s.n)
		s.n++
		s.block.Encrypt(out[:], in[:])
		written += copy(p[written:], out[:])
	}
	return written, nil
}
