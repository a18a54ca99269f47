package inbound

import (
	"sync"
	"time"
)

// unknownSends remembers when this Receiver first saw each send id that
// Options.Sends did not know, so that a report for it is answered "try
// again later" for Options.UnknownSendGrace after that (see
// VerdictRetryLater), then taken and dropped. It holds at most max ids;
// when full, the one first seen longest ago is forgotten, and a report
// for it is then seen anew (given the grace again): the bound can make a
// sender retry longer, never make a report be dropped sooner. It is safe
// for concurrent use.
type unknownSends struct {
	grace time.Duration // > 0

	mu    sync.Mutex
	first map[string]time.Time
	order []string // ring of the ids in the order first seen
	next  int      // index in order of the oldest id once order is full
	max   int
}

func newUnknownSends(grace time.Duration, max int) *unknownSends {
	return &unknownSends{grace: grace, first: make(map[string]time.Time), max: max}
}

// retry reports whether a report for id, which Sends does not know at
// now, should be offered again later: when id was first seen less than
// the grace ago, now included.
func (u *unknownSends) retry(id string, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if at, ok := u.first[id]; ok {
		return now.Sub(at) < u.grace
	}
	if len(u.order) < u.max {
		u.order = append(u.order, id)
	} else {
		delete(u.first, u.order[u.next])
		u.order[u.next] = id
		u.next = (u.next + 1) % len(u.order)
	}
	u.first[id] = now
	return true
}

// seen reports whether id is remembered as unknown: a report for it came
// before and was asked again, so the wait of Options.SendWait is not
// repeated for it (its retry comes minutes later, when a send handed over
// has long been written).
func (u *unknownSends) seen(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.first[id]
	return ok
}
