package postroom

import "encoding/base64"

// Files for Go callers: the spec's Attachment and Image carry their
// content as base64 text, as the JSON has it; these constructors encode
// raw bytes into them, so that a Go caller never encodes by hand. The
// values they return are the spec's types, unchanged: their JSON is what
// an HTTP caller sends.

// FileFromBytes returns data as an Attachment named name, of media type
// contentType (such as "application/pdf"), its Content the standard
// base64 of data. It keeps no reference to data. Name and content type
// are checked with the call, as an HTTP caller's are.
func FileFromBytes(name, contentType string, data []byte) Attachment {
	return Attachment{Name: name, ContentType: contentType, Content: base64.StdEncoding.EncodeToString(data)}
}

// ImageFromBytes returns data as an inline Image named name, of media type
// contentType (such as "image/png"), that the html references as
// cid:<cid>; its Content is the standard base64 of data. It keeps no
// reference to data.
func ImageFromBytes(name, cid, contentType string, data []byte) Image {
	return Image{Name: name, CID: cid, ContentType: contentType, Content: base64.StdEncoding.EncodeToString(data)}
}
