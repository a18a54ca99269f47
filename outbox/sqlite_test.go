package outbox_test

import (
	"errors"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/sqlitedb"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// bareTx is a transaction that hides the engine's own under it: River's
// driver cannot take it.
type bareTx struct{ sqldb.Tx }

// TestEnqueueInApplicationSQLiteTx enqueues in the application's own
// database/sql transaction on the outbox's SQLite file, wrapped with
// sqlitedb.WrapTx, beside a write of the application's: rolled back,
// neither the order nor the call remains and nothing is sent; committed,
// both remain and the call is sent.
func TestEnqueueInApplicationSQLiteTx(t *testing.T) {
	t.Parallel()
	var eng outboxenv.Engine
	for _, e := range outboxenv.Engines() {
		if e.Name == "sqlite" {
			eng = e
		}
	}
	e := newEnv(t, setup{engine: eng})
	sqlDB := e.db.(*sqlitedb.DB).SQL()
	ctx := t.Context()
	if _, err := sqlDB.ExecContext(ctx, `CREATE TABLE orders (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	order := func(id string, call *postroom.Call, commit bool) string {
		t.Helper()
		tx, err := sqlDB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id) VALUES (?)`, id); err != nil {
			t.Fatal(err)
		}
		callID, err := e.ob.Enqueue(ctx, sqlitedb.WrapTx(tx), postroom.OpSend, call, outbox.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		} else if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		return callID
	}
	// A transaction River's driver cannot take is refused before
	// anything is written.
	err := sqldb.BeginFunc(ctx, e.db, func(tx sqldb.Tx) error {
		_, err := e.ob.Enqueue(ctx, bareTx{tx}, postroom.OpSend, newCall("bare", 1), outbox.EnqueueOptions{})
		return err
	})
	if err == nil || errors.Is(err, outbox.ErrNotMigrated) {
		t.Errorf("Enqueue in a transaction River cannot take: %v, want an error saying to wrap the engine's", err)
	}
	rolled := order("A-1", newCall("rolled", 4), false)
	kept := newCall("kept", 3)
	s := e.wait(t, order("A-2", kept, true))
	checkResults(t, e, s, kept) // fails on a message to any rolled-* address
	if s.Counts[postroom.StatusSent] != 3 {
		t.Errorf("counts %v, want 3 sent", s.Counts)
	}
	if _, err := e.ob.Status(ctx, rolled); err == nil {
		t.Error("the rolled-back call has a status")
	}
	var orders int
	if err := sqlDB.QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&orders); err != nil || orders != 1 {
		t.Errorf("%d orders (%v), want the committed one", orders, err)
	}
	var jobs int
	if err := e.db.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&jobs); err != nil || jobs != 1 {
		t.Errorf("%d River jobs (%v), want the committed call's one", jobs, err)
	}
}

// TestSQLiteTemplatesInTheSameFile: a message.send_template call whose
// templates are kept in the outbox's own SQLite file (templatestore.SQL on
// the same DB) enqueues through AccountCalls, which checks the call, and
// so reads the template, before its transaction takes the file's one
// connection; and its job reads the template again to send it.
func TestSQLiteTemplatesInTheSameFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := outboxenv.NewSQLite(t)
	if err := templatestore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	store := templatestore.NewSQL(db)
	if err := store.Put(ctx, "acct", "shipped", "Your order {{n}} has shipped."); err != nil {
		t.Fatal(err)
	}
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Templates: store})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(m, db, outbox.Options{JobSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, ob)
	call := newCall("tmpl", 3)
	call.Message.Text, call.Message.TextTemplateID = "", "shipped"
	id, err := ob.AccountCalls().Enqueue(ctx, postroom.OpSendTemplate, call, "")
	if err != nil {
		t.Fatal(err)
	}
	s := waitDone(t, ob, id)
	if s.Counts[postroom.StatusSent] != 3 {
		t.Errorf("counts %v, want 3 sent", s.Counts)
	}
}
