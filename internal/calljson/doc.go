// Package calljson is the part of the root package's call JSON codec that
// does not need its types: the scanner of the decoding fast path (scan.go),
// the writer of MarshalJSON (write.go) and DecodeCall's shape check
// (shape.go). It imports the standard library only, never the root.
//
// What stays in the root (calljson.go, calljson_encode.go, decode.go) is
// bound to Call's and Recipient's fields: which keys a call and a
// recipient have, the order of the params' keys kept in their unexported
// fields, the slow path through encoding/json into structs of those
// fields, and the errors (ValidationError, ErrInvalidJSON) callers check.
// Moving it here would mean exporting those fields or copying every
// recipient once more.
package calljson
