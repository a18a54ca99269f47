package outbox

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/callhash"
	"github.com/postroom/postroom/internal/pgtest"
)

// reserving is a write that reserves recipients idx.
func reserving(idx ...int32) *write {
	w := &write{}
	for _, i := range idx {
		w.open.add(i, rowReserved, "", "", "")
	}
	return w
}

// sending is a write of recipients idx's results: sent, as this run's
// reservations.
func sending(idx ...int32) *write {
	w := &write{}
	for _, i := range idx {
		w.mine.addResult(i, postroom.Result{Status: postroom.StatusSent, SendID: fmt.Sprintf("id%d", i)})
	}
	return w
}

// putT makes w the next write of l (its number unless it has one, as a
// write tried again keeps its number), and returns its outcome.
func putT(t *testing.T, l *lease, w *write) putOutcome {
	t.Helper()
	if w.seq == 0 {
		w.seq = l.newWrite().seq
	}
	got, err := l.put(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// storeDB returns a pool on a migrated database of its own, holding one
// call "c" of n recipients in one chunk (stored as '[]': the store's
// tests never decode it), and runs stmts on it.
func storeDB(t *testing.T, n int, stmts ...string) *pgxpool.Pool {
	t.Helper()
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		stmts = append([]string{
			fmt.Sprintf(`INSERT INTO postroom_outbox_calls VALUES ('c', 'a', NULL, '\x00', 0, '{}', %d, now())`, n),
			fmt.Sprintf(`INSERT INTO postroom_outbox_chunks (call_id, first, count, recipients) VALUES ('c', 0, %d, '[]')`, n),
		}, stmts...)
	}
	for _, q := range stmts {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return pool
}

// TestFoldMatchesView writes random sequences of writes to a chunk and
// checks that the Go fold (chunkStates, which a run reads) and the view
// postroom_outbox_recipients (which Status, Calls, Stats, Waiting and
// Cancel read) give every recipient the same state.
func TestFoldMatchesView(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storeDB(t, 0)
	const n = 6
	statuses := []string{rowUntried, rowReserved, rowDeferred, "sent", "unknown", "rejected"}
	rng := rand.New(rand.NewPCG(1, 2))
	for c := range 60 {
		id := fmt.Sprintf("c%d", c)
		if _, err := pool.Exec(ctx, `INSERT INTO postroom_outbox_calls VALUES ($1, 'a', NULL, '\x00', 0, '{}', $2, now())`, id, n); err != nil {
			t.Fatal(err)
		}
		for range 1 + rng.IntN(6) {
			var e entries
			bare := rng.IntN(2) == 0 // a write without codes, reasons or send ids: NULL arrays
			for i := range int32(n) {
				if rng.IntN(2) == 0 {
					s := statuses[rng.IntN(len(statuses))]
					if bare {
						e.add(i, s, "", "", "")
					} else {
						e.add(i, s, "code-"+s, fmt.Sprintf("reason %d", rng.IntN(100)), fmt.Sprintf("id%d", rng.IntN(100)))
					}
				}
			}
			if e.len() == 0 {
				continue
			}
			if _, err := pool.Exec(ctx, `INSERT INTO postroom_outbox_results (call_id, first, epoch, idx, status, code, reason, send_id)
				VALUES ($1, 0, $2, $3, $4, $5, $6, $7)`, id, int64(rng.IntN(3)), e.idx, e.status, orNone(e.code), orNone(e.reason), orNone(e.sendID)); err != nil {
				t.Fatal(err)
			}
		}
		st, err := chunkStates(ctx, pool, id, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		view := make([]state, n)
		rows, err := pool.Query(ctx, `SELECT idx, status, code, reason, send_id, epoch FROM postroom_outbox_recipients WHERE call_id = $1`, id)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var i int32
			var s state
			if err := rows.Scan(&i, &s.status, &s.code, &s.reason, &s.sendID, &s.epoch); err != nil {
				t.Fatal(err)
			}
			view[i] = s
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if st[i].status == rowUntried {
				st[i] = state{} // the view has no row for a recipient not tried
			}
			if st[i] != view[i] {
				t.Errorf("call %s, recipient %d: fold %+v, view %+v", id, i, st[i], view[i])
			}
		}
	}
}

// TestPutCancelled: once Cancel has marked the call's chunks, a run's
// write keeps its results of recipients it reserved (mine) and drops its
// new reservations (open); a write with only open writes nothing. Both
// report that the run is to stop.
func TestPutCancelled(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storeDB(t, 4)
	l, err := takeLease(ctx, pool, SendArgs{CallID: "c", First: 0, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := putT(t, l, reserving(0, 1)); got != putDone {
		t.Fatalf("reserve before the cancel: %v", got)
	}
	if _, err := pool.Exec(ctx, `UPDATE postroom_outbox_chunks SET canceled = true`); err != nil {
		t.Fatal(err)
	}
	w := sending(0, 1)
	w.open = reserving(2, 3).open
	if got := putT(t, l, w); got != putMineOnly {
		t.Errorf("results and reservations after the cancel: %v, want mine only", got)
	}
	if got := putT(t, l, reserving(2, 3)); got != putStopped {
		t.Errorf("reservations after the cancel: %v, want stopped", got)
	}
	var states string
	if err := pool.QueryRow(ctx, `SELECT string_agg(idx || ' ' || status, ', ' ORDER BY idx) FROM postroom_outbox_recipients`).Scan(&states); err != nil {
		t.Fatal(err)
	}
	if want := "0 sent, 1 sent"; states != want {
		t.Errorf("states %q, want %q", states, want)
	}
}

// TestEncode: a call is encoded once, and cut into its body (the call
// with its recipients null) and its chunks' recipients, each as
// json.Marshal writes them (params in their decoded order, HTML
// characters escaped); the whole is what callhash.Sum hashes.
func TestEncode(t *testing.T) {
	var call postroom.Call
	if err := json.Unmarshal([]byte(`{"key":"k","account_id":"a","message":{"subject":"<recipients>"},"recipients":[
		{"email":"a@example.org","name":"A <&>","params":{"z":1,"a":[true,null],"m":{"y":"<b>","x":2.5}}},
		{"email":"b@example.org","name":"\"recipients\":[]"},
		{"email":"c@example.org","params":{}}],"global_params":{"recipients":[1]}}`), &call); err != nil {
		t.Fatal(err)
	}
	for _, jobSize := range []int{1, 2, 3, 500} {
		o := &Outbox{opts: Options{JobSize: jobSize}}
		whole, body, chunks, err := o.encode(&call)
		if err != nil {
			t.Fatal(err)
		}
		if sum, err := callhash.Sum(postroom.OpSend, &call); err != nil || sum != callhash.OfJSON(postroom.OpSend, whole) {
			t.Errorf("JobSize %d: the call's hash is not its JSON's (%v)", jobSize, err)
		}
		b := call
		b.Recipients = nil
		if want, err := json.Marshal(&b); err != nil || string(body) != string(want) {
			t.Errorf("JobSize %d: body\n%s\nwant json.Marshal's\n%s (%v)", jobSize, body, want, err)
		}
		if want := (len(call.Recipients) + jobSize - 1) / jobSize; len(chunks) != want {
			t.Fatalf("JobSize %d: %d chunks, want %d", jobSize, len(chunks), want)
		}
		for k, c := range chunks {
			want, err := json.Marshal(call.Recipients[k*jobSize : min((k+1)*jobSize, len(call.Recipients))])
			if err != nil {
				t.Fatal(err)
			}
			if string(c) != string(want) {
				t.Errorf("JobSize %d: chunk %d\n%s\nwant json.Marshal's\n%s", jobSize, k, c, want)
			}
		}
	}
}

// TestDecodeRecipients: a chunk decodes as json.Unmarshal decodes it
// (params and their key order included), and a chunk that is not a JSON
// array of recipients is an error.
func TestDecodeRecipients(t *testing.T) {
	for _, raw := range []string{
		`[{"email":"a@example.org","name":"A \u003c\u0026\u003e","params":{"z":1,"a":[true,null],"m":{"y":"\u003cb\u003e","x":2.5}}},{"email":"b@example.org","name":"","params":null}]`,
		` [ {"params": {"b": "x\ny", "a": 1}, "email": "c@example.org", "extra": 1} ] `,
		`[]`,
	} {
		var want []postroom.Recipient
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeRecipients([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %#v\nwant %#v", raw, got, want)
		}
	}
	for _, raw := range []string{`not json`, `null`, `[`, `[{"email":"a@example.org"}`, `[{"email":"a@example.org"},]`, `[1]`, `{"email":"a@example.org"}`, `[{"email":1}]`, `[], "key": "k"`, ``} {
		if got, err := decodeRecipients([]byte(raw)); err == nil {
			t.Errorf("%q: %v, want an error", raw, got)
		}
	}
}
