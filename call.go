package postroom

import "encoding/base64"

// Call is the body of a message.send or message.send_template call, exactly
// as the spec's JSON: json.Unmarshal of a request body fills it as is.
//
// The Mailer never modifies a Call; the same Call may be sent more than once.
type Call struct {
	// Key is the API key, checked by Options.Auth together with AccountID.
	Key string `json:"key"`
	// AccountID names the account; stored templates are looked up in its
	// scope. At most 255 bytes of UTF-8 without a control character (a
	// ValidationError on "account_id" otherwise); empty is taken.
	AccountID string `json:"account_id"`
	// Message is the message definition shared by all recipients.
	Message Message `json:"message"`
	// Recipients get one message each, at most Options.MaxRecipients (25,000 by default).
	Recipients []Recipient `json:"recipients"`
	// GlobalParams are template parameters for every recipient; a recipient's
	// own Params override them key by key.
	GlobalParams Params `json:"global_params"`

	// globalOrder is the order of GlobalParams' keys in the JSON decoded
	// into the Call (calljson.go); nil when it was not decoded.
	globalOrder []string
}

// Message is the message definition of a Call.
//
// Subject, HTML, Text and header values are handlebars templates (see the
// package documentation, # Templates). Send uses HTML and Text; SendTemplate
// uses HTMLTemplateID and TextTemplateID, looked up in Options.Templates.
type Message struct {
	FromName       string `json:"from_name"`
	FromEmail      string `json:"from_email"`
	ReplyToName    string `json:"replyto_name"`
	ReplyToEmail   string `json:"replyto_email"`
	Subject        string `json:"subject"`
	HTML           string `json:"html"`
	Text           string `json:"text"`
	HTMLTemplateID string `json:"html_template_id"`
	TextTemplateID string `json:"text_template_id"`
	// BCC is one string of comma-separated addresses. Each gets a copy of
	// every recipient's message through the envelope only: no header names them.
	BCC string `json:"bcc"`
	// Headers are extra header fields, written after the standard ones in
	// this order. Values may hold placeholders.
	Headers []Header `json:"headers"`
	// TemplateEngine is empty or "handlebars".
	TemplateEngine string `json:"template_engine"`
	// Images are inline images, referenced from the html as cid:<CID>.
	Images      []Image      `json:"images"`
	Attachments []Attachment `json:"attachments"`
}

// Header is an extra header field of a Message.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Image is an inline image. Content is standard base64 (RFC 4648 §4, padded).
type Image struct {
	Name        string `json:"name"`
	CID         string `json:"cid"`
	ContentType string `json:"content_type"`
	Content     string `json:"content"`
}

// Attachment is an attached file. Content is standard base64 (RFC 4648 §4, padded).
type Attachment struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Content     string `json:"content"`
}

// Recipient is one addressee of a Call.
type Recipient struct {
	Email  string `json:"email"`
	Name   string `json:"name"`
	Params Params `json:"params"`

	// order is the order of Params' keys in the JSON decoded into the
	// Recipient (calljson.go); nil when it was not decoded.
	order []string
}

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
