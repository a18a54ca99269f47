package outbox

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/callhash"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/sqldb"
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

// storeEngines runs test on a database of each engine (dbtest's,
// migrated here), in parallel subtests.
func storeEngines(t *testing.T, test func(t *testing.T, db sqldb.DB)) {
	t.Helper()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			db := e.Open(t)
			if err := Migrate(t.Context(), db); err != nil {
				t.Fatal(err)
			}
			test(t, db)
		})
	}
}

// insertCall stores call id of n recipients with one chunk (stored as
// '[]': the store's tests never decode it) when chunk is true.
func insertCall(t *testing.T, db sqldb.DB, id string, n int, chunk bool) {
	t.Helper()
	ctx := t.Context()
	if _, err := db.Exec(ctx, `INSERT INTO postroom_outbox_calls (id, account_id, request_hash, operation, body, recipients, started_at)
		VALUES ($1, 'a', $2, 0, $3, $4, $5)`, id, []byte{0}, []byte("{}"), n, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !chunk {
		return
	}
	if _, err := db.Exec(ctx, `INSERT INTO postroom_outbox_chunks (call_id, first, count, recipients) VALUES ($1, 0, $2, $3)`, id, n, []byte("[]")); err != nil {
		t.Fatal(err)
	}
}

// storeDB migrates db and stores call "c" of n recipients in one chunk
// on it (none when n is 0).
func storeDB(t *testing.T, db sqldb.DB, n int) sqldb.DB {
	t.Helper()
	if n > 0 {
		insertCall(t, db, "c", n, true)
	}
	return db
}

// insertWrite writes e as a write of call id's chunk 0 of epoch, with
// write number wseq.
func insertWrite(t *testing.T, db sqldb.DB, id string, epoch, wseq int64, e entries) {
	t.Helper()
	if _, err := db.Exec(t.Context(), `INSERT INTO postroom_outbox_results (call_id, first, epoch, wseq, idx, status, code, reason, send_id)
		VALUES ($1, 0, $2, $3, $4, $5, $6, $7, $8)`, id, epoch, wseq, e.idx, e.status, orNone(e.code), orNone(e.reason), orNone(e.sendID)); err != nil {
		t.Fatal(err)
	}
}

// TestFoldMatchesView writes random sequences of writes to a chunk and
// checks that the Go fold (chunkStates, which a run reads) and the view
// postroom_outbox_recipients (which Status, Calls, Stats, Waiting and
// Cancel read) give every recipient the same state.
func TestFoldMatchesView(t *testing.T) {
	t.Parallel()
	storeEngines(t, testFoldMatchesView)
}

func testFoldMatchesView(t *testing.T, pool sqldb.DB) {
	ctx := t.Context()
	const n = 6
	wseq := int64(0)
	statuses := []string{rowUntried, rowReserved, rowDeferred, "sent", "unknown", "rejected"}
	rng := rand.New(rand.NewPCG(1, 2))
	for c := range 60 {
		id := fmt.Sprintf("c%d", c)
		insertCall(t, pool, id, n, false)
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
			wseq--
			insertWrite(t, pool, id, int64(rng.IntN(3)), wseq, e)
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
	storeEngines(t, testPutCancelled)
}

func testPutCancelled(t *testing.T, db sqldb.DB) {
	ctx := t.Context()
	pool := storeDB(t, db, 4)
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
	if err := pool.QueryRow(ctx, dialect(pool, `SELECT string_agg(idx || ' ' || status, ', ' ORDER BY idx) FROM postroom_outbox_recipients`,
		`SELECT group_concat(s, ', ') FROM (SELECT idx || ' ' || status AS s FROM postroom_outbox_recipients ORDER BY idx)`)).Scan(&states); err != nil {
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
