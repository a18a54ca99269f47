package outbox

// The chunks of a call: those that still have recipients without a final
// result, read for Waiting and Cancel, and the addresses of all its
// recipients, for Status.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/calljson"
	"github.com/postroom/postroom/sqldb"
)

// openChunk is a job's range of recipients, some without a final result:
// the recipients of indices first .. first+len(emails)-1.
type openChunk struct {
	first  int32
	emails []string
}

// openChunks returns the chunks of call callID with at least one
// recipient without a final result, in index order, with their recipients'
// addresses decoded here (not in SQL: a recipient's params may hold what
// PostgreSQL's jsonb refuses, such as \u0000). A chunk whose stored
// recipients cannot be decoded gives empty addresses, as the worker's
// giving up does.
func openChunks(ctx context.Context, q sqldb.Querier, callID string) ([]openChunk, error) {
	rows, err := q.Query(ctx, dialect(q, `SELECT ch.first, ch.count, ch.recipients FROM postroom_outbox_chunks ch
		WHERE ch.call_id = $1
		  AND (SELECT count(*) FROM postroom_outbox_results f, unnest(f.status) AS u(status)
		       WHERE f.call_id = ch.call_id AND f.first = ch.first
		         AND u.status NOT IN ('', 'reserved', 'deferred')) < ch.count
		ORDER BY ch.first`, `SELECT ch.first, ch.count, ch.recipients FROM postroom_outbox_chunks ch
		WHERE ch.call_id = $1
		  AND (SELECT count(*) FROM postroom_outbox_results f, json_each(f.status) AS u
		       WHERE f.call_id = ch.call_id AND f.first = ch.first
		         AND u.value NOT IN ('', 'reserved', 'deferred')) < ch.count
		ORDER BY ch.first`), callID)
	if err != nil {
		return nil, fmt.Errorf("outbox: chunks of call %s: %w", callID, err)
	}
	defer rows.Close()
	var chunks []openChunk
	for rows.Next() {
		var first, count int32
		var raw []byte
		if err := rows.Scan(&first, &count, &raw); err != nil {
			return nil, fmt.Errorf("outbox: chunks of call %s: %w", callID, err)
		}
		chunks = append(chunks, openChunk{first: first, emails: decodeEmails(raw, int(count))})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: chunks of call %s: %w", callID, err)
	}
	return chunks, nil
}

// decodeEmails returns the n addresses of a chunk's stored recipients,
// or n empty ones when they cannot be read.
func decodeEmails(raw []byte, n int) []string {
	var rs []struct {
		Email string `json:"email"`
	}
	emails := make([]string, n)
	if json.Unmarshal(raw, &rs) != nil || len(rs) != n {
		return emails
	}
	for k, r := range rs {
		emails[k] = r.Email
	}
	return emails
}

// callResults returns the results of the n recipients of done call
// callID, in input order: each one's state folded from the call's writes
// in one pass (see fold.go), and its address from its chunk (an
// unreadable chunk gives empty ones).
func callResults(ctx context.Context, q sqldb.Querier, callID string, n int) ([]postroom.Result, error) {
	rows, err := q.Query(ctx, `SELECT first, count, recipients FROM postroom_outbox_chunks WHERE call_id = $1`, callID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	emails := make([]string, n)
	for rows.Next() {
		var first, count int32
		var raw []byte
		if err := rows.Scan(&first, &count, &raw); err != nil {
			return nil, err
		}
		if first >= 0 && int(first)+int(count) <= n {
			copy(emails[first:], decodeEmails(raw, int(count)))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	// The writes of every chunk at once: a recipient's writes are all in
	// its chunk's, and indices are the call's.
	rows, err = q.Query(ctx, `SELECT epoch, idx, status, code, reason, send_id FROM postroom_outbox_results
		WHERE call_id = $1 ORDER BY seq`, callID)
	if err != nil {
		return nil, err
	}
	st, err := foldRows(q.Engine(), rows, 0, n)
	if err != nil {
		return nil, err
	}
	results := make([]postroom.Result, n)
	for i, s := range st {
		results[i] = postroom.Result{Email: emails[i], Status: postroom.Status(s.status),
			Code: postroom.ReasonCode(s.code), Reason: s.reason, SendID: s.sendID}
	}
	return results, nil
}

// decodeRecipients decodes a chunk's stored recipients as
// json.Unmarshal into a []postroom.Recipient does, each element through
// postroom.Recipient's decoder, straight into the slice: its one pass
// reads the shape Enqueue writes, where json.Unmarshal would check the
// whole chunk before decoding it (and a recipient of another shape is
// read by encoding/json all the same).
func decodeRecipients(raw []byte) ([]postroom.Recipient, error) {
	i := calljson.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, errors.New("not a JSON array")
	}
	rs := []postroom.Recipient{}
	i = calljson.SkipSpace(raw, i+1)
	empty := i < len(raw) && raw[i] == ']'
	if empty {
		i++
	}
	for more := !empty; more; {
		if i >= len(raw) || raw[i] != '{' {
			return nil, errors.New("not a JSON array of objects")
		}
		end, ok := calljson.SkipValue(raw, i)
		if !ok {
			return nil, errors.New("not a JSON array")
		}
		rs = append(rs, postroom.Recipient{})
		if err := rs[len(rs)-1].UnmarshalJSON(raw[i:end]); err != nil {
			return nil, err
		}
		if i, more, ok = calljson.After(raw, end, ']'); !ok {
			return nil, errors.New("not a JSON array")
		}
	}
	if calljson.SkipSpace(raw, i) != len(raw) {
		return nil, errors.New("not one JSON array")
	}
	return rs, nil
}
