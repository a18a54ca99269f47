package inbound

import (
	"context"
	"crypto/tls"
	"log/slog"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/option"
	"github.com/postroom/postroom/suppression"
)

// Defaults of Options.
const (
	// DefaultMaxMessageBytes is the largest message taken: postroom's own
	// largest message (postroom.DefaultMaxMessageBytes, 25 MiB) returned
	// whole, with 1 MiB for the report around it. Most servers return
	// only the headers or the first kilobytes (Postfix: 50,000 bytes).
	DefaultMaxMessageBytes = 26 << 20
	// DefaultMaxRecipients is the most recipients of one transaction: a
	// report goes to one envelope sender, so a few are plenty.
	DefaultMaxRecipients = 50
	// DefaultMaxConnections is the most connections served at once;
	// more wait to be accepted.
	DefaultMaxConnections = 100
	// DefaultReadTimeout bounds each command, and the whole DATA
	// transfer, as Postfix's smtpd_timeout does.
	DefaultReadTimeout = 5 * time.Minute
	// DefaultWriteTimeout bounds each reply.
	DefaultWriteTimeout = time.Minute
	// DefaultSendWait is how long a message waits for the record of a
	// send not recorded yet before it is answered "try again later": five
	// times an events.Recorder's DefaultFlushAfter, with an application
	// flushing every second (as examples/httpapi does), so that a send
	// written a second or two after its hand-over is found with room for
	// a slow write. The wait ends as soon as the send is found.
	DefaultSendWait = 5 * time.Second
	// DefaultMaxSendWaits is how many messages wait for their sends at
	// once: each holds its connection, and looks its send up again at
	// most four times a second.
	DefaultMaxSendWaits = 100
	// DefaultUnknownSendGrace is how long a report for a send id that
	// Sends does not know yet is answered "try again later". A retry that
	// comes after it still finds a send written by then; the grace only
	// needs to outlast the writing of a send record: an events.Recorder
	// writes within FlushAfter (a second by default), and later while its
	// database is out of reach, which ten minutes covers. A forged or
	// expired id costs its sender the retries within it (one or two:
	// Postfix's minimal_backoff_time is 5 minutes, Exim's first retries
	// come every 15).
	DefaultUnknownSendGrace = 10 * time.Minute
	// DefaultMaxUnknownSends is how many unknown send ids a Receiver
	// remembers for UnknownSendGrace: about 150 bytes each.
	DefaultMaxUnknownSends = 10_000
)

// Defaults of the Options that bound a session on the internet (see the
// package doc's "The receiver on the internet").
const (
	// DefaultStressReadTimeout is ReadTimeout while connections run short:
	// Postfix's smtpd_timeout = ${stress?{10}:{300}}s.
	DefaultStressReadTimeout = 10 * time.Second
	// DefaultMaxSessionTime bounds a whole connection: above Postfix's
	// smtp_connection_reuse_time_limit (300 s, how long a Postfix client
	// keeps reusing one session) plus a DATA transfer of ReadTimeout.
	DefaultMaxSessionTime = 20 * time.Minute
	// DefaultMaxJunkCommands is Postfix's smtpd_junk_command_limit.
	DefaultMaxJunkCommands = 100
	// DefaultMaxLogRepeats is how many log lines with the same message are
	// written per minute.
	DefaultMaxLogRepeats = 10
)

// Observer applies what a report proves to a suppression list: package
// suppression's Memory and SQL satisfy it (their Observe applies the
// list's policy: a hard bounce lists the address at once, soft bounces
// after several, a complaint at once). It must be safe for concurrent use.
type Observer interface {
	Observe(ctx context.Context, o suppression.Observation) (*suppression.Entry, error)
}

// Options configure a Receiver. New validates and copies them; the
// Receiver never changes them.
type Options struct {
	// VERP is the Mailer's postroom.Options.VERP: the domain whose mail
	// the Receiver takes, and the local part before the send id. Its
	// Domain is required.
	VERP postroom.VERP

	// ReportLocals are local parts of VERP.Domain taken besides the VERP
	// addresses, such as "fbl" for a mailbox provider's feedback loop,
	// which sends its complaints to one fixed address. A report to one of
	// them is tied to a send by the send id shown in the returned
	// message's headers (bounce.Report.SendID), looked up in Sends like
	// any other. Nil means none: only VERP addresses.
	ReportLocals []string

	// Sends looks up the send a report is about (package events: Memory,
	// SQL). Required.
	Sends events.Sends

	// Suppressions receives an Observation for each hard bounce, soft
	// bounce and complaint proven about a recorded send. Nil means none:
	// the Receiver only emits events.
	Suppressions Observer

	// OnEvent, when not nil, receives each event a report proves
	// (hard_bounce, soft_bounce, spam, deferral), from the goroutine
	// handling the message, with Serve's or Handle's ctx; it must be safe
	// for concurrent use. An events.Recorder's OnEvent fits, as it does
	// postroom.Options.OnEvent. Nil means none.
	OnEvent func(ctx context.Context, e postroom.Event)

	// Hostname is the name the server gives in its greeting. Empty means
	// VERP.Domain.
	Hostname string

	// MaxMessageBytes is the largest message taken, in octets as
	// received; a larger one is refused (552 5.3.4) and not acted on,
	// and is never held in memory whole. Zero means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64

	// MaxRecipients is the most recipients of one SMTP transaction; more
	// get 452 4.5.3. Zero means DefaultMaxRecipients.
	MaxRecipients int

	// MaxConnections is the most connections one Serve call serves at
	// once; more wait to be accepted. Zero means DefaultMaxConnections.
	MaxConnections int

	// MaxConnectionsPerClient is the most connections one client IP
	// address may have open at once; one more is answered 421 4.7.0 and
	// closed at once, without taking a slot of MaxConnections. It mirrors
	// Postfix's smtpd_client_connection_count_limit. Connections without
	// an IP address (a Unix socket) are not counted. Zero means half of
	// MaxConnections, at least 1, as Postfix's default (50) is half its
	// default_process_limit (100).
	MaxConnectionsPerClient int

	// StressReadTimeout replaces ReadTimeout while at least four fifths of
	// MaxConnections are open: then each read from a client, a new
	// connection's or one already waiting, waits at most this long, so
	// that idle connections make room for new ones. It mirrors Postfix's
	// stress-dependent smtpd_timeout = ${stress?{10}:{300}}s. It is never
	// longer than ReadTimeout. Zero means DefaultStressReadTimeout (10 s).
	StressReadTimeout time.Duration

	// MaxSessionTime bounds a whole connection, however busy: when it is
	// over, the server answers 421 4.4.2 and closes the connection,
	// whatever the client is sending. Postfix has no such limit (its
	// smtpd_timeout bounds each read, and smtpd_per_request_deadline each
	// command); this one bounds what a client trickling commands or a
	// message can hold. Zero means DefaultMaxSessionTime (20 minutes).
	MaxSessionTime time.Duration

	// MaxJunkCommands is how many commands that carry no mail (NOOP,
	// RSET, VRFY, HELO, EHLO, LHLO, HELP and any other besides MAIL,
	// RCPT, DATA, BDAT, AUTH, STARTTLS and QUIT) a client may send
	// between two messages taken; one more is answered 421 4.7.0 and the
	// connection closed. It mirrors Postfix's smtpd_junk_command_limit
	// (which counts NOOP, VRFY, ETRN, RSET, HELO and EHLO, reset when a
	// message is delivered). It is not counted after STARTTLS: then
	// MaxSessionTime bounds such a session. Zero means
	// DefaultMaxJunkCommands (100).
	MaxJunkCommands int

	// MaxLogRepeats is how many lines with the same message the Receiver
	// logs per minute (a flood of unknown send ids, of timeouts); the
	// next line of that message logged after the minute carries the count
	// of those left out ("suppressed"). Postfix has no such limit (it
	// leaves it to syslog's rate limiting). Zero means
	// DefaultMaxLogRepeats (10); negative means no limit.
	MaxLogRepeats int

	// ReadTimeout bounds the wait for each command line, from the end of
	// the previous reply to the command's end of line, and the whole DATA
	// transfer or BDAT chunk; when it is over, the server answers 421
	// 4.4.2 and closes the connection (a command line cut by it is never
	// run as a new wait's start). It mirrors Postfix's smtpd_timeout with
	// smtpd_per_request_deadline = yes. Zero means DefaultReadTimeout.
	ReadTimeout time.Duration

	// WriteTimeout bounds each reply. Zero means DefaultWriteTimeout.
	WriteTimeout time.Duration

	// SendWait is how long a message waits for the send its report is
	// about when Sends does not know its well-formed send id and the
	// report could prove something (a bounce, delay notice or
	// complaint): a destination that refuses at once, through a local
	// relay, returns its bounce within milliseconds of the hand-over,
	// before the send's record is written (an events.Recorder writes its
	// batch every FlushEvents events, within FlushAfter of the next
	// event, and at Flush). The Receiver looks the send up again after
	// 20 ms, then at doubling intervals of at most 250 ms, until it is
	// found (the report is then acted on, in this delivery) or SendWait
	// has passed since the message's first wait began (then as
	// UnknownSendGrace says). The wait is one per message: over SMTP the
	// recipients of one transaction share it. It is not repeated for a
	// send id already answered "try again later". Nothing on the send
	// path waits or writes more for it. Zero means DefaultSendWait (5
	// seconds); a negative value means off: a send not recorded at the
	// first lookup is answered at once as UnknownSendGrace says. The
	// wait ends early when ctx is done (a *StoreError from Handle, 451
	// from the server). It is measured on the real clock, not Now.
	SendWait time.Duration

	// MaxSendWaits is how many messages of the Receiver (all its Serve
	// calls and Handle together) wait for their sends at once; a message
	// beyond it is not waited for, but answered at once as
	// UnknownSendGrace says, as with SendWait off. It bounds the
	// connections and lookups that reports for unknown send ids (forged
	// ones too) can hold. Zero means DefaultMaxSendWaits.
	MaxSendWaits int

	// UnknownSendGrace is how long after this Receiver first sees a
	// well-formed send id that Sends does not know, a bounce, delay
	// notice or complaint for it is answered "try again later" rather
	// than dropped: VerdictRetryLater from Handle, 451 4.3.0 from the
	// server, so that the sending server offers it again. A send's record
	// is written a moment after the message left (an events.Recorder
	// writes its batch every FlushEvents events or FlushAfter), and a
	// destination that refuses at once can bounce sooner; a send id
	// carries no time of its own, so the Receiver cannot tell such a
	// bounce from one for a send it will never know. The grace applies
	// once SendWait is over without the send: it covers a record written
	// later than that (its database out of reach). After the grace,
	// reports for the id are taken and dropped (VerdictUnknownSend).
	// Auto-replies and other messages that prove nothing are never asked
	// again. Zero means DefaultUnknownSendGrace (10 minutes); a negative
	// value means off: an unknown send id is dropped at once.
	UnknownSendGrace time.Duration

	// MaxUnknownSends is how many unknown send ids the Receiver remembers
	// for UnknownSendGrace; when full, the one first seen longest ago is
	// forgotten, and a report for it is then given the grace anew (a
	// flood of forged ids makes senders retry longer; it never makes a
	// report be dropped sooner). Zero means DefaultMaxUnknownSends.
	MaxUnknownSends int

	// TLS, when not nil, is offered with STARTTLS. Nil means no TLS. The
	// Receiver does not modify it.
	TLS *tls.Config

	// Logger receives what the Receiver drops (unknown send ids, reports
	// naming other addresses), the sessions and connections the server ends or
	// refuses under its limits, and the server's errors, at most MaxLogRepeats
	// lines of one message a minute. Nil discards every record
	// (slog.New(slog.DiscardHandler)), as for every Logger of the module
	// (package option).
	Logger *slog.Logger

	// Now is the clock for events, observations and UnknownSendGrace.
	// Nil means time.Now.
	Now func() time.Time
}

// Receiver takes the reports (bounces, complaints, auto-replies) that
// come back to the VERP domain, proves which send each is about, and
// records what it proves. Make one with New; it is safe for concurrent
// use and starts nothing until Serve. Its options never change; its only
// state is its memory of unknown send ids (Options.UnknownSendGrace),
// bounded by Options.MaxUnknownSends, and the count of messages waiting
// for their sends (Options.SendWait), bounded by Options.MaxSendWaits,
// both shared by its Serve calls and Handle.
type Receiver struct {
	opts    Options
	locals  map[string]bool // ReportLocals in lower case
	unknown *unknownSends   // nil when UnknownSendGrace is off
	waits   chan struct{}   // a token per message waiting for its send; nil when SendWait is off
}

// opNew is New's name in its *option.Error.
const opNew = "inbound.New"

// New returns a Receiver, or an *option.Error naming the field of opts
// that is missing or out of range. It gives every zero field its default
// by the module's rule (package option): zero means the default, and a
// negative number is refused except where the field says what it means.
func New(opts Options) (*Receiver, error) {
	if opts.VERP.Domain == "" {
		return nil, option.Errorf(opNew, "Options.VERP.Domain", "is empty: it is required")
	}
	if opts.VERP.Local == "" {
		opts.VERP.Local = postroom.DefaultVERPLocal
	}
	if strings.Contains(opts.VERP.Local, "+") || strings.Contains(opts.VERP.Local, "@") {
		return nil, option.Errorf(opNew, "Options.VERP.Local", "%q contains '+' or '@'", opts.VERP.Local)
	}
	if opts.Sends == nil {
		return nil, option.Errorf(opNew, "Options.Sends", "is nil: it is required")
	}
	locals := make(map[string]bool, len(opts.ReportLocals))
	for _, l := range opts.ReportLocals {
		if l == "" || strings.ContainsAny(l, "@+<> \t") || strings.EqualFold(l, opts.VERP.Local) {
			return nil, option.Errorf(opNew, "Options.ReportLocals", "%q is not a plain local part other than VERP.Local", l)
		}
		locals[strings.ToLower(l)] = true
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	opts.VERP.Domain = strings.ToLower(opts.VERP.Domain)
	if opts.Hostname == "" {
		opts.Hostname = opts.VERP.Domain
	}
	opts.StressReadTimeout = min(opts.StressReadTimeout, opts.ReadTimeout)
	opts.Logger = option.Logger(opts.Logger)
	if opts.MaxLogRepeats > 0 {
		opts.Logger = slog.New(newRepeatLimiter(opts.Logger.Handler(), opts.MaxLogRepeats, time.Minute))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.ReportLocals = nil // kept as locals
	rc := &Receiver{opts: opts, locals: locals}
	if opts.UnknownSendGrace > 0 {
		rc.unknown = newUnknownSends(opts.UnknownSendGrace, opts.MaxUnknownSends)
	}
	if opts.SendWait > 0 {
		rc.waits = make(chan struct{}, opts.MaxSendWaits)
	}
	return rc, nil
}

// setDefaults gives the number fields of o their defaults, refusing the
// negative ones that have no meaning (MaxLogRepeats, UnknownSendGrace and
// SendWait: negative turns off what they bound, and is kept as -1).
func (o *Options) setDefaults() error {
	if err := option.Default(opNew, "Options.MaxMessageBytes", &o.MaxMessageBytes, DefaultMaxMessageBytes); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
		off  bool // a negative value turns off what the field bounds
	}{
		{"MaxRecipients", &o.MaxRecipients, DefaultMaxRecipients, false},
		{"MaxConnections", &o.MaxConnections, DefaultMaxConnections, false},
		{"MaxJunkCommands", &o.MaxJunkCommands, DefaultMaxJunkCommands, false},
		{"MaxUnknownSends", &o.MaxUnknownSends, DefaultMaxUnknownSends, false},
		{"MaxSendWaits", &o.MaxSendWaits, DefaultMaxSendWaits, false},
		{"MaxLogRepeats", &o.MaxLogRepeats, DefaultMaxLogRepeats, true},
	} {
		def := option.Default[int]
		if f.off {
			def = option.DefaultOrOff[int]
		}
		if err := def(opNew, "Options."+f.name, f.v, f.def); err != nil {
			return err
		}
	}
	// Half of MaxConnections, defaulted above.
	if err := option.Default(opNew, "Options.MaxConnectionsPerClient", &o.MaxConnectionsPerClient, max(o.MaxConnections/2, 1)); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
		off  bool
	}{
		{"ReadTimeout", &o.ReadTimeout, DefaultReadTimeout, false},
		{"WriteTimeout", &o.WriteTimeout, DefaultWriteTimeout, false},
		{"StressReadTimeout", &o.StressReadTimeout, DefaultStressReadTimeout, false},
		{"MaxSessionTime", &o.MaxSessionTime, DefaultMaxSessionTime, false},
		{"UnknownSendGrace", &o.UnknownSendGrace, DefaultUnknownSendGrace, true},
		{"SendWait", &o.SendWait, DefaultSendWait, true},
	} {
		def := option.Default[time.Duration]
		if f.off {
			def = option.DefaultOrOff[time.Duration]
		}
		if err := def(opNew, "Options."+f.name, f.v, f.def); err != nil {
			return err
		}
	}
	return nil
}
