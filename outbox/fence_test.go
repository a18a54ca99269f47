package outbox

import (
	"testing"

	"github.com/postroom/postroom/sqldb"
)

// TestFence plays two runs of one job against the database: run A
// reserves a batch and stalls (a process frozen, its job rescued by
// River), run B starts. B settles A's batch as unknown and never sends
// it; A's late results and its next reservation change nothing.
func TestFence(t *testing.T) {
	t.Parallel()
	storeEngines(t, testFence)
}

func testFence(t *testing.T, db sqldb.DB) {
	ctx := t.Context()
	pool := storeDB(t, db, 4)
	args := SendArgs{CallID: "c", First: 0, Count: 4}

	a, err := takeLease(ctx, pool, args)
	if err != nil {
		t.Fatal(err)
	}
	if got := putT(t, a, reserving(0, 1)); got != putDone {
		t.Fatalf("A's reserve: %v", got)
	}

	b, err := takeLease(ctx, pool, args)
	if err != nil {
		t.Fatal(err)
	}
	todo, err := b.pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(todo) != 2 || todo[0] != 2 || todo[1] != 3 {
		t.Fatalf("B's pending: %v, want [2 3]: A's reserved batch is not B's to send", todo)
	}
	if got := putT(t, a, sending(0, 1)); got != putStopped {
		t.Fatalf("A's results after B's lease: %v, want superseded", got)
	}
	if got := putT(t, a, reserving(2, 3)); got != putStopped {
		t.Fatalf("A's reserve after B's lease: %v, want superseded", got)
	}
	if got := putT(t, b, reserving(2, 3)); got != putDone {
		t.Fatalf("B's reserve: %v", got)
	}
	if got := putT(t, b, sending(2, 3)); got != putDone {
		t.Fatalf("B's results: %v", got)
	}
	rows, err := pool.Query(ctx, `SELECT status, code FROM postroom_outbox_recipients WHERE call_id = 'c' ORDER BY idx`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s, c string
		if err := rows.Scan(&s, &c); err != nil {
			t.Fatal(err)
		}
		got = append(got, s+"/"+c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	want := []string{"unknown/interrupted", "unknown/interrupted", "sent/", "sent/"}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("recipient %d: %s, want %s", i, got[i], want[i])
		}
	}
}
