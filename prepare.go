package postroom

import (
	"cmp"
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"

	"github.com/postroom/postroom/internal/dkim"
	"github.com/postroom/postroom/internal/mimemsg"
)

// Prepared is a call checked and compiled once, ready to run all or some
// of its recipients any number of times, as database/sql's Stmt is a
// statement prepared once: Mailer.Prepare makes it, Run and RunSome send,
// Preview shows what would be sent, Checks reports what the checks found
// per recipient.
//
// A Prepared holds what Prepare found, which every run reads: the call's
// account was authenticated, its fields and recipients checked, its
// templates compiled and linked, its message laid out. What each run
// draws anew (see Run) is not in it. It is immutable and safe for
// concurrent use: runs of one Prepared may overlap.
//
// It keeps the *Call it was prepared from and reads it in every run: the
// caller must not modify the call (its recipients, params, files) while
// the Prepared is in use. Prepare itself never modifies it.
//
// The zero Prepared (or a nil *Prepared) is not usable: its methods
// return ErrZeroPrepared (Checks, no results).
type Prepared struct {
	m          *Mailer
	call       *Call
	op         Operation
	tpl        *templates
	base       *mimemsg.Layout // what every message shares but the Date
	from       string          // envelope reverse path
	fromDomain string
	bcc        []string
	// checks holds one Result per recipient: the invalid Result of a
	// recipient refused whatever its params (checkRecipients), the zero
	// Result for the others. Read-only: each run copies what it needs.
	checks []Result
	// normalized holds the address of the few recipients whose address for
	// SMTP differs from their email with spaces trimmed (an IDN or
	// upper-case domain). Written by checkRecipients, read-only after.
	normalized map[int]string
	genText    bool // the text part is generated from the html
	// oneShot: the Prepared is run once by the Mailer method that made it
	// (Run, Preview) and never reaches a caller, so its run may take
	// checks as its results instead of a copy.
	oneShot bool
	// unsubscribe is the index among the dynamic header values of a
	// List-Unsubscribe value checked per recipient (one-click), or -1.
	unsubscribe int
	// addUnsubscribe: the layout ends with the List-Unsubscribe fields
	// Options.Unsubscribe adds, the call having none of its own.
	addUnsubscribe bool
	// list is the list id of the call's List-Id, lower-cased, or "" for
	// a transactional call (listid.go).
	list string
}

// ErrZeroPrepared is the error of every method of a Prepared not made by
// Mailer.Prepare, rather than a panic.
var ErrZeroPrepared = errors.New("postroom: Prepared not made by Mailer.Prepare")

// made returns ErrZeroPrepared when p was not made by Prepare.
func (p *Prepared) made() error {
	if p == nil || p.m == nil {
		return ErrZeroPrepared
	}
	return nil
}

// job is one run of a Prepared: what the seal drew for it (keys, Date,
// skeleton, signing), its hooks and the recipients it runs. It is
// read-only while the workers run.
type job struct {
	*Prepared
	skel  *mimemsg.Skeleton
	dkim  *dkim.Call   // nil: messages are not signed
	ids   cipher.Block // send ids: AES of (nonce, index), unique within the run
	nonce uint64
	hooks RunOptions // the run's hooks; zero for Preview
	// bcc are the run's bcc addresses: the Prepared's less those the
	// suppression list holds (suppress).
	bcc []string
	// indexes are the recipients run, in the order of the run's results:
	// position k is recipient indexes[k]. Nil: every recipient, in order.
	indexes []int
	// ev holds the fields every event of the run shares (event.go).
	ev Event
}

// recipient is the index in call.Recipients of the run's k-th recipient.
func (j *job) recipient(k int) int {
	if j.indexes == nil {
		return k
	}
	return j.indexes[k]
}

// Prepare checks call as operation op and returns it prepared, to be run,
// in whole or in part, by the Prepared's Run and RunSome, or previewed.
// It makes the checks of Run before anything is sent, in order:
//
//  1. authenticate (Options.Auth);
//  2. validate (validate.go): everything the call's own fields decide,
//     recipients included; a call with no usable structure stops here;
//  3. compile and link: the bodies (store.go, looked up for
//     message.send_template), every template compiled (render.go, through
//     cache.go) and the partials they name linked (partials.go);
//  4. lay out (mime.go): what every message shares, and the checks only
//     the layout can make (cid references, header values, one-click
//     unsubscribe, files that alone exceed Options.MaxMessageBytes).
//
// A call refused as a whole gets Run's errors (ErrUnauthorized,
// ErrNoRecipients, ErrTooManyRecipients, ErrTemplateNotFound, a
// *ValidationError, several joined with errors.Join; a call stopped in
// step 2 or by its stored bodies gets those alone, otherwise the
// templates' problems come first) and no Prepared. A recipient refused by
// the checks (an invalid address, a duplicate) does not refuse the call:
// it has its invalid Result in Checks, and every run gives it that
// Result.
//
// Prepare reads nothing of Options.Rand or Options.Now and sends nothing.
// The Prepared keeps call: see Prepared.
func (m *Mailer) Prepare(ctx context.Context, op Operation, call *Call) (*Prepared, error) {
	return m.prepare(ctx, op, call, false)
}

// prepare is Prepare. With oneShot, for a Prepared that its maker (Run,
// Preview) runs once and drops, it leaves out the check of step 4 that
// needs a skeleton (the files alone over the message limit), which the
// run makes on the skeleton it builds (seal), so that the message is not
// laid out twice; and the run takes the checks as its results.
func (m *Mailer) prepare(ctx context.Context, op Operation, call *Call, oneShot bool) (*Prepared, error) {
	if err := m.made(); err != nil {
		return nil, err
	}
	switch op {
	case OpSend, OpSendTemplate:
	default:
		return nil, fmt.Errorf("postroom: unknown operation %d", int(op))
	}
	if call == nil {
		return nil, &ValidationError{Field: "call", Reason: "nil"}
	}
	if err := m.authenticate(ctx, call); err != nil {
		return nil, err
	}
	p := &Prepared{m: m, call: call, op: op, oneShot: oneShot}
	c, err := p.validate()
	if err != nil {
		return nil, err
	}

	msg := &call.Message
	html, text, err := m.bodies(ctx, op, call)
	if err != nil {
		return nil, err
	}
	var errs []error
	p.tpl, err = m.compileTemplates(ctx, templateSource{"message.subject", msg.Subject}, html, text, msg.Headers)
	if err == nil {
		err = m.linkPartials(ctx, call.AccountID, p.tpl, p.tpl.roots("message.subject", html.field, text.field))
	}
	if err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.problems...)

	// The checks that need the bodies or the compiled templates, which
	// validate has not got: the html's cid references (cid.go), the
	// one-click unsubscribe headers (unsubscribe.go), then the layout's.
	errs = append(errs, checkCIDs(html, msg.Images)...)
	p.genText = m.generatesText(html.src != "", text.src != "")
	p.unsubscribe = -1
	if c.headers {
		var uerrs, lerrs []error
		p.unsubscribe, uerrs = checkUnsubscribe(msg.Headers, p.tpl)
		p.list, lerrs = checkListID(msg.Headers)
		errs = append(append(errs, uerrs...), lerrs...)
	}
	p.addUnsubscribe = m.opts.Unsubscribe != nil && !hasOwnUnsubscribe(msg.Headers) && (p.list != "" || m.opts.UnsubscribeAllMail)
	var lerrs []error
	p.base, lerrs = p.layout(html, text, c)
	if errs = append(errs, lerrs...); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if !oneShot {
		// The static size does not depend on the Date or the boundaries
		// (both of fixed length): a trial skeleton, with a zero Date and
		// zero boundaries, gives the size every run's skeleton has.
		skel, err := mimemsg.New(p.base, zeroReader{})
		if err != nil {
			return nil, err
		}
		if err := p.checkStaticSize(skel); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// authenticate asks Options.Auth for call's account and key: a refusal
// is, or wraps, ErrUnauthorized.
func (m *Mailer) authenticate(ctx context.Context, call *Call) error {
	if err := m.opts.Auth.Authenticate(ctx, call.AccountID, call.Key); err != nil {
		if errors.Is(err, ErrUnauthorized) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	return nil
}

// Authenticate asks the Mailer's Options.Auth again for the call's account
// and key, as Prepare did: nil, or an error that is or wraps
// ErrUnauthorized. Prepare authenticates once, and runs do not
// authenticate again; a caller that keeps a Prepared for a while (package
// outbox keeps one per attempt of a job) calls Authenticate before each
// run, so that a key revoked since Prepare stops the runs after it.
func (p *Prepared) Authenticate(ctx context.Context) error {
	if err := p.made(); err != nil {
		return err
	}
	return p.m.authenticate(ctx, p.call)
}

// Checks returns what the checks of Prepare found per recipient: one
// Result per recipient, in input order, the invalid Result every run gives
// a recipient refused by the checks of addresses, names and duplicates,
// and the zero Result (empty Status) for every other recipient, whose
// outcome is only known when its message is made and handed over. The
// slice is the caller's.
func (p *Prepared) Checks() []Result {
	if p.made() != nil {
		return nil
	}
	return append([]Result(nil), p.checks...)
}

// Validate makes the checks that Run makes before it renders anything, and
// sends nothing: it is Prepare followed by Checks. It returns the
// call-level errors of Send and SendTemplate (ErrUnauthorized,
// ErrNoRecipients, a *ValidationError, ...) and no results, or one Result
// per recipient, in input order: the invalid Result Run would give a
// recipient refused by the per-recipient checks, the zero Result for every
// other recipient.
//
// It is for callers that send a call later, or in parts (package outbox):
// they refuse bad input at once, with Send's errors. Like Run, it never
// modifies call, and it reads nothing of Options.Rand. A caller that sends
// the call afterwards in the same process keeps the Prepared instead.
func (m *Mailer) Validate(ctx context.Context, op Operation, call *Call) ([]Result, error) {
	p, err := m.Prepare(ctx, op, call)
	if err != nil {
		return nil, err
	}
	// The suppression list too, so that a caller that sends later refuses
	// listed recipients at once; p is dropped: its checks are the caller's.
	j := &job{Prepared: p, bcc: p.bcc}
	if err := j.suppress(ctx, p.checks); err != nil {
		return nil, err
	}
	return p.checks, nil
}

// seal makes one run of p over the recipients indexes (nil: all), the
// part of a call that differs from run to run, in a straight line:
//
//  1. draw the run's keys (sendid.go): the call's one read of
//     Options.Rand, for the send ids and the MIME boundaries;
//  2. stamp the Date (Options.Now) and build the skeleton every message
//     is appended from (internal/mimemsg);
//  3. set up the signing (dkim.go), which signs the Date.
//
// Each run seals anew: the Date is the run's, as a message sent later
// must not carry the Date of its call's first run, and each run's send
// ids come from keys of its own (see sendID).
func (p *Prepared) seal(indexes []int, hooks RunOptions) (*job, error) {
	j := &job{Prepared: p, indexes: indexes, hooks: hooks, bcc: p.bcc}
	var boundaries io.Reader
	var err error
	if j.ids, j.nonce, boundaries, err = drawCallKeys(p.m.opts.Rand); err != nil {
		return nil, err
	}
	if p.m.opts.OnEvent != nil {
		j.ev = callEvent(p.op, p.call, p.list, cmp.Or(hooks.CallID, j.runCallID()))
	}
	l := p.base
	if !p.oneShot {
		l = new(mimemsg.Layout) // p.base is read by other runs
		*l = *p.base
	}
	l.Date = p.m.opts.Now()
	if j.skel, err = mimemsg.New(l, boundaries); err != nil {
		return nil, err
	}
	j.dkim = newDKIMCall(p.m.opts.DKIM, l, j.skel)
	if err := p.checkStaticSize(j.skel); err != nil {
		return nil, err
	}
	return j, nil
}

// checkStaticSize refuses a call whose files alone (with the headers that
// do not vary) exceed Options.MaxMessageBytes.
func (p *Prepared) checkStaticSize(skel *mimemsg.Skeleton) error {
	if n := skel.StaticSize(); n > p.m.opts.MaxMessageBytes {
		return &ValidationError{Field: "message", Reason: fmt.Sprintf("images and attachments alone make %d bytes, over the %d-byte message limit", n, p.m.opts.MaxMessageBytes)}
	}
	return nil
}

// zeroReader reads zeros: the boundaries of Prepare's trial skeleton.
type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}
