package inbound_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
)

// TestLogRepeats: 2,000 reports for unknown send ids log each line a
// few times (MaxLogRepeats), not once per report.
func TestLogRepeats(t *testing.T) {
	log := &logRecorder{}
	sends, _ := events.NewMemory(events.MemoryOptions{})
	rec, err := inbound.New(inbound.Options{VERP: verp, Sends: sends, Logger: slog.New(log), UnknownSendGrace: -1, SendWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		id := fmt.Sprintf("%032x", i+1)
		if _, err := rec.Handle(t.Context(), strings.NewReader(dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", "550 5.1.1 User unknown")), verp.Address(id)); err != nil {
			t.Fatal(err)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.recs) == 0 {
		t.Fatal("nothing logged")
	}
	byMsg := map[string]int{}
	for _, r := range log.recs {
		byMsg[r.Message]++
	}
	for m, n := range byMsg {
		if n > inbound.DefaultMaxLogRepeats {
			t.Errorf("%q logged %d times, want at most %d", m, n, inbound.DefaultMaxLogRepeats)
		}
	}
}
