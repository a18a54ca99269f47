package outbox

import (
	"context"
	"fmt"

	"github.com/postroom/postroom"
)

// LaterEvents reads what happened to messages after they left: bounces,
// complaints and unsubscribes that came back, which Status shows beside a
// done call's results (postroom.CallStatus.Later). Package events' SQL
// log satisfies it (events.SQL.After), fed by the Mailer's
// Options.OnEvent for the sends and by package inbound and unsubscribe
// for what comes back; this package names only the method, so that it
// does not depend on where the events are kept.
//
// After returns, for each of sendIDs that has one, the latest event
// recorded about that message after its send (any type but
// postroom.EventSend), keyed by the send id in lower case, in one lookup
// whatever their number; an id with none is absent from the map. An
// error means the log could not answer. It must be safe for concurrent
// use, and ctx bounds it.
type LaterEvents interface {
	After(ctx context.Context, sendIDs []string) (map[string]postroom.Event, error)
}

// later fills s.Later from Options.Events, when it is set, with what came
// back for the messages of s.Results that were handed over; one lookup.
func (o *Outbox) later(ctx context.Context, s *postroom.CallStatus) error {
	if o.opts.Events == nil {
		return nil
	}
	ids := make([]string, 0, len(s.Results))
	for _, r := range s.Results {
		if r.SendID != "" && (r.Status == postroom.StatusSent || r.Status == postroom.StatusQueued) {
			ids = append(ids, r.SendID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := o.opts.Events.After(ctx, ids)
	if err != nil {
		return fmt.Errorf("outbox: status: reading Options.Events: %w", err)
	}
	for _, id := range ids {
		if e, ok := found[id]; ok && e.Type != postroom.EventSend {
			s.Later = append(s.Later, e)
		}
	}
	return nil
}
