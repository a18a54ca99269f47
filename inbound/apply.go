package inbound

import (
	"context"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/bounce"
	"github.com/postroom/postroom/internal/sendid"
	"github.com/postroom/postroom/suppression"
)

// apply records what m proves about the send rt leads to (see Handle).
func (rc *Receiver) apply(ctx context.Context, m *message, rt route) (Outcome, error) {
	p, err := rc.prove(ctx, m, rt)
	if err != nil || p.out.Verdict != VerdictRecorded {
		return p.out, err
	}
	return rc.record(ctx, p)
}

// proof is what prove found: the Outcome so far and, when its verdict is
// VerdictRecorded, what record is to record.
type proof struct {
	out Outcome
	evs []postroom.Event
	obs []suppression.Observation
}

// prove looks up the send rt leads to and decides what m's report proves
// about it, recording nothing: the server proves a message for every
// recipient of an SMTP transaction before it records any, so that a reply
// asking for the message again leaves nothing recorded twice. A send not
// recorded yet is awaited for Options.SendWait (see awaitSend) when the
// report could prove something.
func (rc *Receiver) prove(ctx context.Context, m *message, rt route) (proof, error) {
	rep := m.rep
	out := Outcome{Report: rep, SendID: rt.sendID}
	if rt.report {
		out.SendID = sendid.Normalize(rep.SendID)
	}
	log := rc.opts.Logger.With("rcpt", rt.addr, "type", string(rep.Type), "send_id", out.SendID)
	if out.SendID == "" {
		log.Info("inbound: report without a send id; dropped")
		out.Verdict = VerdictUnknownSend
		return proof{out: out}, nil
	}
	snd, ok, err := rc.opts.Sends.Lookup(ctx, out.SendID)
	if err != nil {
		return proof{out: out}, &StoreError{Op: "look up send " + out.SendID, Err: err}
	}
	if !ok && proves(rep.Type) {
		// A local relay can return a bounce before the send's record is
		// written: wait for it, briefly.
		if snd, ok, err = rc.awaitSend(ctx, m, out.SendID); err != nil {
			return proof{out: out}, err
		}
	}
	if !ok {
		if rc.unknown != nil && proves(rep.Type) && rc.unknown.retry(out.SendID, rc.opts.Now()) {
			// The send may be recorded in a moment (a Recorder's batch
			// not written yet): the sender's server offers it again.
			log.Info("inbound: report for a send id not recorded (yet); the sender is asked to retry")
			out.Verdict = VerdictRetryLater
			return proof{out: out}, nil
		}
		log.Info("inbound: report for an unknown or expired send id; dropped")
		out.Verdict = VerdictUnknownSend
		return proof{out: out}, nil
	}
	out.Send = snd
	if rt.sendID != "" && rep.SendID != "" && sendid.Normalize(rep.SendID) != rt.sendID {
		// The envelope proves the send; the text's id is only noted.
		log.Info("inbound: report shows another send id than its envelope's; the envelope's is used", "report_send_id", rep.SendID)
	}

	var obs []suppression.Observation
	var evs []postroom.Event
	now := rc.opts.Now()
	base := postroom.Event{SendID: snd.ID, AccountID: snd.AccountID, Email: snd.Email, List: snd.List, At: now}
	observe := func(kind suppression.Kind, typ postroom.EventType, reason, status, diag string) {
		e := base
		e.Type, e.Reason, e.Status, e.Diagnostic = typ, reason, status, diag
		evs = append(evs, e)
		obs = append(obs, suppression.Observation{
			AccountID: snd.AccountID, Address: snd.Email, Kind: kind,
			Status: status, Diagnostic: diag, SendID: snd.ID, At: now,
			List: snd.List, // a complaint about list mail silences list mail only
		})
	}

	switch rep.Type {
	case bounce.TypeBounce, bounce.TypeDelay:
		// The recipient's entries: a hard failure wins over a soft one,
		// a failure over a delay; one observation per report.
		var failed, delayed *bounce.Recipient
		named := false
		for i := range rep.Recipients {
			r := &rep.Recipients[i]
			if !sameAddress(r.Address, snd.Email) {
				continue
			}
			named = true
			switch {
			case r.Action == "failed" || r.Action == "" && rep.Type == bounce.TypeBounce:
				if failed == nil || r.Hard && !failed.Hard {
					failed = r
				}
			case r.Action == "delayed":
				if delayed == nil {
					delayed = r
				}
			}
		}
		switch {
		case !named:
			log.Warn("inbound: report names other addresses than its send's recipient; dropped", "recipients", addresses(rep))
			out.Verdict = VerdictOtherRecipient
			return proof{out: out}, nil
		case failed != nil && failed.Hard:
			observe(suppression.HardBounce, postroom.EventHardBounce, failed.Class, failed.Status, failed.Diagnostic)
		case failed != nil:
			observe(suppression.SoftBounce, postroom.EventSoftBounce, failed.Class, failed.Status, failed.Diagnostic)
		case delayed != nil:
			e := base
			e.Type, e.Reason, e.Status, e.Diagnostic = postroom.EventDeferral, delayed.Class, delayed.Status, delayed.Diagnostic
			evs = append(evs, e)
		}
	case bounce.TypeComplaint:
		// Providers often redact the complainer's address: a complaint
		// naming no one is about the send its id proves; one naming
		// addresses must name the send's recipient.
		named, match := false, false
		for _, r := range rep.Recipients {
			if strings.TrimSpace(r.Address) != "" {
				named = true
				match = match || sameAddress(r.Address, snd.Email)
			}
		}
		if named && !match {
			log.Warn("inbound: complaint names other addresses than its send's recipient; dropped", "recipients", addresses(rep))
			out.Verdict = VerdictOtherRecipient
			return proof{out: out}, nil
		}
		observe(suppression.Complaint, postroom.EventSpam, rep.FeedbackType, "", "")
	default:
		log.Debug("inbound: nothing to record")
		out.Verdict = VerdictNoAction
		return proof{out: out}, nil
	}

	if len(evs) == 0 {
		// The recipient is named, but only as delivered, relayed, ...
		out.Verdict = VerdictNoAction
		return proof{out: out}, nil
	}
	out.Verdict = VerdictRecorded
	return proof{out: out, evs: evs, obs: obs}, nil
}

// record records p, whose verdict is VerdictRecorded: its observations in
// Options.Suppressions, then its events to Options.OnEvent.
func (rc *Receiver) record(ctx context.Context, p proof) (Outcome, error) {
	out := p.out
	if rc.opts.Suppressions != nil {
		for _, o := range p.obs {
			e, err := rc.opts.Suppressions.Observe(ctx, o)
			if err != nil {
				return out, &StoreError{Op: "observe " + o.Address, Err: err}
			}
			if e != nil {
				out.Listed = append(out.Listed, *e)
			}
		}
	}
	out.Events = p.evs
	if rc.opts.OnEvent != nil {
		for _, e := range p.evs {
			rc.opts.OnEvent(ctx, e)
		}
	}
	return out, nil
}

// proves reports whether a report of type t can prove something about
// its send: a bounce, a delay notice or a complaint.
func proves(t bounce.Type) bool {
	return t == bounce.TypeBounce || t == bounce.TypeDelay || t == bounce.TypeComplaint
}

// sameAddress reports whether a report's address is the recorded one:
// equal but for letter case, surrounding space and angle brackets.
func sameAddress(reported, recorded string) bool {
	reported = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(reported), "<"), ">")
	return reported != "" && strings.EqualFold(reported, strings.TrimSpace(recorded))
}

// addresses lists the report's recipients' addresses, for the log.
func addresses(rep *bounce.Report) []string {
	as := make([]string, len(rep.Recipients))
	for i, r := range rep.Recipients {
		as[i] = r.Address
	}
	return as
}
