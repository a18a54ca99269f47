package smtptest

import (
	"testing"

	"github.com/postroom/postroom"
)

// CheckLedger asserts that results, one per address, agree with the
// messages s holds, the oracle of the fault tests: a sent recipient's
// message was accepted exactly once, a rejected, deferred or invalid one's
// never, an unknown one's at most once, only unknown recipients' messages
// were kept with the connection cut after the final dot, and the server
// accepted nothing for an address no result names.
//
// It reads s.Messages() once; call it after the sends are done.
func CheckLedger(tb testing.TB, s *Server, results []postroom.Result) {
	tb.Helper()
	accepted, cut := map[string]int{}, map[string]int{}
	for _, m := range s.Messages() {
		if m.Cut {
			cut[m.To[0]]++
		} else {
			accepted[m.To[0]]++
		}
	}
	status := map[string]postroom.Status{}
	for _, r := range results {
		if _, dup := status[r.Email]; dup {
			tb.Fatalf("two results for %s", r.Email)
		}
		status[r.Email] = r.Status
		a, c := accepted[r.Email], cut[r.Email]
		switch r.Status {
		case postroom.StatusSent:
			if a != 1 || c != 0 {
				tb.Errorf("%s sent, but the server accepted it %d times and kept it cut %d times", r.Email, a, c)
			}
		case postroom.StatusUnknown:
			if a+c > 1 {
				tb.Errorf("%s unknown, but the server holds it %d times", r.Email, a+c)
			}
		default:
			if a+c != 0 {
				tb.Errorf("%s %s, but the server holds it %d times", r.Email, r.Status, a+c)
			}
		}
	}
	for addr := range cut {
		if status[addr] != postroom.StatusUnknown {
			tb.Errorf("the connection was cut after the dot for %s, reported %q, want unknown", addr, status[addr])
		}
	}
	for addr := range accepted {
		if _, ok := status[addr]; !ok {
			tb.Errorf("the server accepted a message for %s, which no call had", addr)
		}
	}
}
