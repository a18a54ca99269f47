package postroom

// The suppression list as the sending path sees it: one batched lookup per
// call (Options.Suppressions), after validation and before any rendering.
// Keeping and feeding a list is package suppression's work.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/postroom/postroom/internal/replytext"
)

// ErrSuppressions is wrapped by the error of a call whose lookup in
// Options.Suppressions failed: the call is refused as a whole and nothing
// is sent, rather than sending to addresses that may be listed. It is not
// the caller's fault (no ValidationError): an HTTP handler answers 500, and
// a queue retries the call later.
var ErrSuppressions = errors.New("postroom: suppression list lookup failed")

// Suppressions is the suppression list a Mailer consults
// (Options.Suppressions): the addresses of an account that must not be
// sent to, because they bounced, complained, unsubscribed or were listed
// by hand. Package suppression has implementations in memory and in
// PostgreSQL, with the policy that lists addresses and the calls that
// manage the list.
//
// Suppressed returns the entries of accountID that are active at now
// (Created at or before now, Expires zero or after now) among addresses,
// of every scope: the Mailer keeps those that cover the call's message
// (Suppression.Covers with its list) and, when several cover a recipient,
// names the widest in its Result. An address may have an entry per scope
// (all mail, all lists, each list).
// A Mailer calls it once per call (Send, SendTemplate, Run, Preview,
// Validate), with every recipient that passed validation and every bcc
// address in one slice: an implementation answers it with one lookup (one
// query for 25,000 addresses, not 25,000 queries). Addresses are compared
// as the whole address lower-cased, as hosted services do (a Mailer passes
// them lower-cased; an implementation lower-cases them all the same);
// Suppression.Address is the address as the list keeps it, lower-cased.
// addresses may hold an address twice (a bcc address that is also a
// recipient); its entries may then come back twice. The result holds no
// entry for an address not in addresses, and is owned by the caller.
//
// It must be safe for concurrent use. ctx bounds the lookup; an error
// (ctx's included) refuses the call with an error wrapping
// ErrSuppressions. Suppressed must not modify addresses.
type Suppressions interface {
	Suppressed(ctx context.Context, accountID string, addresses []string, now time.Time) ([]Suppression, error)
}

// Suppression is one active entry of a suppression list, as
// Suppressions.Suppressed returns it.
type Suppression struct {
	// Address is the suppressed address, lower-cased.
	Address string
	// Reason is why it is listed: ReasonHardBounce, ReasonSoftBounce,
	// ReasonSpam, ReasonUnsub or ReasonManual. It is the Code of the
	// Result of a recipient it rejects; empty means ReasonManual.
	Reason ReasonCode
	// Detail says, for people, what listed it: the status and diagnostic
	// of a bounce ("550 5.1.1 user unknown"), or a comment. It ends the
	// Result's reason, made one line of at most 512 octets. Empty: none.
	Detail string
	// SendID is the send id of the message whose bounce or complaint
	// listed the address, when known; else empty.
	SendID string
	// Created is when the address was listed. Expires is when it stops
	// being listed; zero means never.
	Created, Expires time.Time
	// Scope is which of the address's mail the entry silences: ScopeAll
	// (or empty, as entries made before scopes are) every message,
	// ScopeLists every list message, ScopeList the messages of List. See
	// Covers.
	Scope Scope
	// List is the list id (lower-cased) of a ScopeList entry; else empty.
	List string
}

// Scope is which mail of an address a suppression silences: list mail is
// a message whose List-Id names its list (ListID), every other message is
// transactional.
type Scope string

// Scopes. The zero Scope is ScopeAll.
const (
	// ScopeAll silences every message: a hard bounce, soft bounces past
	// the policy, a complaint about a transactional message.
	ScopeAll Scope = "all"
	// ScopeLists silences every list message and leaves transactional
	// mail alone: "unsubscribe from all lists", a complaint about a list
	// message.
	ScopeLists Scope = "lists"
	// ScopeList silences the messages of one list (Suppression.List): a
	// one-click unsubscribe from it.
	ScopeList Scope = "list"
)

// Covers reports whether s silences a message of list (its list id, ""
// for a transactional message): ScopeAll and the zero Scope cover every
// message, ScopeLists every list message, ScopeList the messages of its
// List (compared case-insensitively, RFC 2919). An entry of a scope this
// version does not know covers every message: a list that cannot be read
// stops mail rather than let it through.
func (s *Suppression) Covers(list string) bool {
	switch s.Scope {
	case ScopeLists:
		return list != ""
	case ScopeList:
		return list != "" && strings.EqualFold(s.List, list)
	}
	return true
}

// breadth orders scopes from the narrowest (0) to the widest, for the
// entry that a recipient's Result names when several cover its message.
func (s *Suppression) breadth() int {
	switch s.Scope {
	case ScopeList:
		return 0
	case ScopeLists:
		return 1
	}
	return 2
}

// SuppressedError is the Err of the Result of a recipient that
// Options.Suppressions lists: the recipient is rejected with the entry's
// reason and no message is made. Reach it with errors.As.
type SuppressedError struct {
	Suppression Suppression
}

func (e *SuppressedError) Error() string {
	return "postroom: suppressed: " + string(e.Suppression.reason())
}

// reason is s's reason code, ReasonManual when it has none.
func (s *Suppression) reason() ReasonCode {
	if s.Reason == "" {
		return ReasonManual
	}
	return s.Reason
}

// outcome is the outcome of a recipient s lists: rejected with s's
// reason, and as detail from which mail, when it was listed and what
// listed it, such as "suppressed since 2026-11-20: 550 5.1.1 user
// unknown" or "suppressed from list news.shop.example.com since
// 2026-11-20".
func (s *Suppression) outcome() outcome {
	detail := "suppressed"
	switch s.Scope {
	case ScopeList:
		detail += " from list " + replytext.Line(s.List)
	case ScopeLists:
		detail += " from all lists"
	}
	if !s.Created.IsZero() {
		detail += " since " + s.Created.UTC().Format(time.DateOnly)
	}
	if !s.Expires.IsZero() {
		detail += " until " + s.Expires.UTC().Format(time.DateOnly)
	}
	if d := replytext.Line(s.Detail); d != "" {
		detail += ": " + d
	}
	return outcome{status: StatusRejected, code: s.reason(), detail: detail, err: &SuppressedError{Suppression: *s}}
}

// Authenticate checks accountID and key with Options.Auth, as every call
// does first, for handlers that serve other requests of the account with
// the same keys (such as the suppression list's endpoints in httpapi). A
// refusal is an error wrapping ErrUnauthorized.
func (m *Mailer) Authenticate(ctx context.Context, accountID, key string) error {
	if err := m.made(); err != nil {
		return err
	}
	return m.authenticate(ctx, &Call{AccountID: accountID, Key: key})
}

// suppress consults Options.Suppressions, once for the run, about every
// recipient of the run that passed the checks (results[k] is the run's
// k-th recipient's, j.recipient(k)) and every bcc address. A listed
// recipient gets its final Result now, rejected with the entry's reason,
// and no message. A listed bcc address is dropped from the run's
// envelopes (j.bcc), and the drop logged at info level (the bcc is no
// recipient: it has no Result). A lookup that fails refuses the run with
// an error wrapping ErrSuppressions.
//
// It is called once per run, not once per Prepare: a Prepared kept for a
// while (package outbox keeps one per attempt of a job, run once per
// batch) sees the list as it is when each of its runs starts.
func (j *job) suppress(ctx context.Context, results []Result) error {
	list := j.m.opts.Suppressions
	if list == nil {
		return nil
	}
	addrs := make([]string, 0, len(results)+len(j.bcc))
	for k := range results {
		if results[k].Status == "" {
			addrs = append(addrs, strings.ToLower(j.address(j.recipient(k))))
		}
	}
	for _, b := range j.bcc {
		addrs = append(addrs, strings.ToLower(b))
	}
	if len(addrs) == 0 {
		return nil
	}
	now := j.m.opts.Now()
	found, err := list.Suppressed(ctx, j.call.AccountID, addrs, now)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSuppressions, err)
	}
	if len(found) == 0 {
		return nil
	}
	listed := make(map[string]*Suppression, len(found))
	for n := range found {
		s := &found[n]
		if s.Created.After(now) || !s.Expires.IsZero() && !s.Expires.After(now) || !s.Covers(j.list) {
			continue
		}
		a := strings.ToLower(s.Address)
		if prev := listed[a]; prev == nil || s.breadth() > prev.breadth() {
			listed[a] = s
		}
	}
	if len(listed) == 0 {
		return nil
	}
	a := 0 // addrs[a] is the address of the run's k-th recipient
	for k := range results {
		if results[k].Status != "" {
			continue
		}
		if s := listed[addrs[a]]; s != nil {
			results[k] = s.outcome().result(j.call.Recipients[j.recipient(k)].Email, "")
		}
		a++
	}
	if len(j.bcc) == 0 {
		return nil
	}
	kept := make([]string, 0, len(j.bcc))
	for n, b := range j.bcc {
		s := listed[addrs[a+n]]
		if s == nil {
			kept = append(kept, b)
			continue
		}
		j.m.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "postroom bcc suppressed",
			slog.String("account_id", j.call.AccountID),
			slog.String("bcc", b),
			slog.String("reason", string(s.reason())))
	}
	j.bcc = kept
	return nil
}
