// Package callhash is the hash of a call's content: what package
// idempotency compares a key's retries by (idempotency.HashCall), and
// what package outbox stores with an enqueued call's idempotency key.
package callhash

import (
	"crypto/sha256"
	"fmt"

	"github.com/postroom/postroom"
)

// Sum returns SHA-256 of operation op's name, a zero byte and call's
// canonical JSON (encoding/json of the Call: fields in a fixed order, the
// keys of params and their objects in the order they were decoded in,
// which {{#each}} follows), so that two bodies that differ only in
// spacing or field order have the same sum. The API key is part of the
// body: a replay answers only the credentials the call was made with.
func Sum(op postroom.Operation, call *postroom.Call) ([sha256.Size]byte, error) {
	// Call.MarshalJSON's own output, as json.Marshal would give it but
	// without encoding/json checking it again (the call's files are most
	// of it).
	b, err := call.MarshalJSON()
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("hashing the call: %w", err)
	}
	return OfJSON(op, b), nil
}

// OfJSON is Sum of the call whose Call.MarshalJSON is callJSON, for a
// caller that has encoded the call already.
func OfJSON(op postroom.Operation, callJSON []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(op.String()))
	h.Write([]byte{0})
	h.Write(callJSON)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
