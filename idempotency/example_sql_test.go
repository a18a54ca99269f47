package idempotency_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/sqldb/sqlitedb"
	"github.com/postroom/postroom/transport"
)

// The records in a SQLite file, for one process; for several instances,
// pass pgxdb.New(pool) instead, with the same calls.
func ExampleNewSQL() {
	dir, err := os.MkdirTemp("", "postroom-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "postroom.db"), sqlitedb.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := idempotency.Migrate(ctx, db); err != nil {
		panic(err)
	}
	store, err := idempotency.NewSQL(db, idempotency.Options{})
	if err != nil {
		panic(err)
	}

	tr := transport.NewMemory()
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		panic(err)
	}
	call := &postroom.Call{
		AccountID:  "acct",
		Message:    postroom.Message{FromEmail: "shop@example.com", Subject: "Shipped", Text: "Your order has shipped."},
		Recipients: []postroom.Recipient{{Email: "ann@example.com"}},
	}
	first, _ := idempotency.Run(ctx, store, m, "order-1001", postroom.OpSend, call)
	retry, _ := idempotency.Run(ctx, store, m, "order-1001", postroom.OpSend, call)
	fmt.Println(first[0].Status, retry[0].Status, first[0].SendID == retry[0].SendID, tr.Len())
	// Output:
	// sent sent true 1
}
