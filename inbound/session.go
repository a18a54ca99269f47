package inbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/emersion/go-smtp"
)

// backend makes a session per connection; ctx is Serve's.
type backend struct {
	rc   *Receiver
	ctx  context.Context
	lmtp bool
}

func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{rc: b.rc, ctx: b.ctx, lmtp: b.lmtp, conn: connOf(c)}, nil
}

// session is one connection's transaction state.
//
// QUIRK: go-smtp v0.25.1 runs Data (LMTPData) for BDAT in a goroutine of
// its own, which goes on while its command loop runs the next commands:
// RSET, MAIL and RCPT can reach the session while the Data of the
// transaction before is still reading, or before it has even started,
// and Data then used to see, and report to the old transaction's status
// collector, the new transaction's recipients (a panic in SetStatus,
// "SetStatus is called for recipient that was not specified before").
// So: each transaction has a generation, which Reset moves on; Data takes
// the recipients of its own generation when it starts, and acts and
// reports only if its generation is still the current one when the whole
// message was read (a reset ends the chunk pipe: its read fails first).
// A Data call that could not read its message reports to no recipient:
// go-smtp may hand it a status collector that is not its transaction's.
//
// That goroutine also sends its result to the connection's result
// channel as it is when it sends, which the next transaction's BDAT may
// have replaced: that transaction would be answered with the reset one's
// result. So a reset during a BDAT transfer ends the session: the
// clientConn ends it before go-smtp reads the command (cmdLines); after
// STARTTLS, Reset does, and MAIL and RCPT are refused from then on, so
// that the commands go-smtp has read already begin no transfer.
type session struct {
	rc   *Receiver
	ctx  context.Context
	lmtp bool        // a reply per recipient after DATA
	conn *clientConn // nil when not one of ours

	mu     sync.Mutex
	gen    uint64   // the transaction's generation
	busy   bool     // a BDAT transfer of this generation has not been read whole
	ended  bool     // reset during a BDAT transfer: no transaction is begun
	rcpts  []string // as given to Rcpt, for LMTP's per-recipient replies
	routes []route
}

// tx is the transaction a Data call works on.
type tx struct {
	gen    uint64
	rcpts  []string
	routes []route
}

// errEnded421 answers MAIL and RCPT after a session was ended (a reply
// that is not sent: the connection is closed).
var errEnded421 = &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 5, 0}, Message: "Error: message transfer reset"}

// errChanged is what a Data call whose transaction was reset returns; it
// is never the reply to a transaction of the client's (go-smtp drops it).
var errChanged = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Transaction reset, try again"}

func (s *session) Reset() {
	s.mu.Lock()
	busy := s.busy
	s.gen++
	s.busy = false
	s.ended = s.ended || busy
	s.rcpts, s.routes = nil, nil
	s.mu.Unlock()
	if busy {
		// A reset during a BDAT transfer, which the clientConn ends
		// before go-smtp reads it unless the session is encrypted (see
		// cmdLines); or go-smtp's reset after a chunk it refused. The
		// connection is closed, but go-smtp runs the commands it has
		// read already: MAIL and RCPT are refused, so that no BDAT
		// begins another transfer.
		s.conn.transferReset()
	}
}

func (s *session) Logout() error { return nil }

func (s *session) Mail(string, *smtp.MailOptions) error {
	s.Reset()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return errEnded421
	}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	rt, err := s.rc.route(to)
	var re *RecipientError
	if errors.As(err, &re) {
		if re.OtherDomain {
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Relay access denied"}
		}
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return errEnded421
	}
	s.rcpts = append(s.rcpts, to)
	s.routes = append(s.routes, rt)
	return nil
}

// begin starts a Data call reading r on the current transaction.
// go-smtp hands Data the reading end of an io.Pipe for BDAT, its own
// reader for DATA.
func (s *session) begin(r io.Reader) tx {
	_, bdat := r.(*io.PipeReader)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = bdat
	return tx{gen: s.gen, rcpts: s.rcpts, routes: s.routes}
}

// read says that t's message was read whole: go-smtp has the last chunk
// and waits for Data's result.
func (s *session) read(t tx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == t.gen {
		s.busy = false
	}
}

// current says whether t is still the session's transaction.
func (s *session) current(t tx) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen == t.gen
}

// Data reads the message once and applies it for every recipient; one
// reply for all.
func (s *session) Data(r io.Reader) error {
	t := s.begin(r)
	s.conn.dataStarted()
	errs, err := s.handle(t, r)
	if err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	s.conn.messageTaken()
	return nil
}

// LMTPData is Data with a reply per recipient. When the message could
// not be read, or its transaction was reset meanwhile, it reports to no
// recipient and returns the reply, which go-smtp gives every recipient
// of the transaction that status belongs to.
func (s *session) LMTPData(r io.Reader, status smtp.StatusCollector) error {
	t := s.begin(r)
	s.conn.dataStarted()
	errs, err := s.handle(t, r)
	if err != nil {
		return err
	}
	taken := false
	for i, rcpt := range t.rcpts {
		if err := setStatus(status, rcpt, errs[i]); err != nil {
			s.rc.opts.Logger.Error("inbound: reporting an LMTP recipient's status failed", "err", err)
			return errChanged
		}
		taken = taken || errs[i] == nil
	}
	if taken {
		s.conn.messageTaken()
	}
	return nil
}

// setStatus reports err for rcpt to go-smtp's status collector, which
// panics for a recipient it was not given: a panic is returned as an
// error.
func setStatus(status smtp.StatusCollector, rcpt string, err error) (perr error) {
	defer func() {
		if p := recover(); p != nil {
			perr = fmt.Errorf("inbound: go-smtp's SetStatus: %v", p)
		}
	}()
	status.SetStatus(rcpt, err)
	return nil
}

// handle reads the message and applies it for each recipient of t,
// returning each recipient's SMTP error or nil; or one error for all when
// the message could not be read or t is no longer the session's
// transaction (nothing was applied).
func (s *session) handle(t tx, r io.Reader) ([]error, error) {
	errs := make([]error, len(t.routes))
	rep, err := s.rc.read(r)
	if err != nil {
		return nil, smtpError(err)
	}
	s.read(t)
	if !s.current(t) {
		return nil, errChanged
	}
	// Prove for every recipient before recording for any: over SMTP one
	// reply answers them all, and when it asks for the message again the
	// retry must find nothing recorded yet (a soft bounce counted twice
	// would bring its address nearer the list).
	proofs := make([]proof, len(t.routes))
	var retry error
	for i, rt := range t.routes {
		p, err := s.rc.prove(s.ctx, rep, rt)
		switch {
		case err != nil:
			s.rc.opts.Logger.Error("inbound: looking up a report's send failed; the sender is asked to retry", "rcpt", rt.addr, "err", err)
			errs[i] = smtpError(err)
		case p.out.Verdict == VerdictRetryLater:
			errs[i] = errRetryLater
		}
		if retry == nil {
			retry = errs[i]
		}
		proofs[i] = p
	}
	if retry != nil && !s.lmtp {
		for i := range errs {
			errs[i] = retry
		}
		return errs, nil
	}
	for i, p := range proofs {
		if errs[i] != nil || p.out.Verdict != VerdictRecorded {
			continue
		}
		if _, err := s.rc.record(s.ctx, p); err != nil {
			s.rc.opts.Logger.Error("inbound: recording a report failed; the sender is asked to retry", "rcpt", t.routes[i].addr, "err", err)
			errs[i] = smtpError(err)
		}
	}
	return errs, nil
}
