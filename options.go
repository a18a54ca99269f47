package postroom

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/postroom/postroom/internal/program"
	"github.com/postroom/postroom/option"
)

// Defaults of the Options fields: New gives each zero field its default
// (see Options.setDefaults).
const (
	DefaultMaxRecipients    = 25000
	DefaultMaxMessageBytes  = 25 << 20
	DefaultMaxBCC           = 100
	DefaultMaxHeaders       = 100
	DefaultMaxTemplateBytes = 512 << 10
	DefaultMaxTemplateDepth = 32
	DefaultMaxRenderBytes   = 8 << 20
	DefaultMaxRenderSteps   = 1_000_000

	// DefaultTemplateCacheEntries and DefaultTemplateCacheBytes bound the
	// compiled-template cache (Options.TemplateCacheEntries and
	// Options.TemplateCacheBytes).
	DefaultTemplateCacheEntries = 1024
	DefaultTemplateCacheBytes   = 32 << 20

	// DefaultFileCacheBytes bounds the cache of checked and encoded
	// images and attachments (Options.FileCacheBytes).
	DefaultFileCacheBytes = 32 << 20

	// DefaultMaxPartialDepth is the default of Options.MaxPartialDepth.
	DefaultMaxPartialDepth = 8

	// DefaultVERPLocal is the local part of VERP addresses when VERP.Local
	// is empty.
	DefaultVERPLocal = "bounces"
)

// defaultConcurrency is the default of Options.Concurrency: enough
// recipients in flight that transport waits do not idle the CPU.
func defaultConcurrency() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

// opNew is New's name in its *OptionsError.
const opNew = "postroom.New"

// setDefaults gives every zero field of o its default by the module's rule
// (package option): zero means the default, and a negative value is an
// *OptionsError, except where the field's documentation gives it a
// meaning (a negative TemplateCacheEntries or TemplateCacheBytes turns
// the cache off: both are then -1, and a negative FileCacheBytes is -1).
// A nil Logger discards; a nil Now or Rand, and the empty VERP.Local of a
// VERP that is on, get their defaults too. New calls it before any other
// check.
func (o *Options) setDefaults() error {
	for _, f := range []struct {
		name string
		v    *int
		def  int
		off  bool // a negative value turns off what the field bounds
	}{
		{"Concurrency", &o.Concurrency, defaultConcurrency(), false},
		{"MaxRecipients", &o.MaxRecipients, DefaultMaxRecipients, false},
		{"MaxMessageBytes", &o.MaxMessageBytes, DefaultMaxMessageBytes, false},
		{"MaxBCC", &o.MaxBCC, DefaultMaxBCC, false},
		{"MaxHeaders", &o.MaxHeaders, DefaultMaxHeaders, false},
		{"MaxTemplateBytes", &o.MaxTemplateBytes, DefaultMaxTemplateBytes, false},
		{"MaxTemplateDepth", &o.MaxTemplateDepth, DefaultMaxTemplateDepth, false},
		{"MaxRenderBytes", &o.MaxRenderBytes, DefaultMaxRenderBytes, false},
		{"MaxRenderSteps", &o.MaxRenderSteps, DefaultMaxRenderSteps, false},
		{"MaxPartialDepth", &o.MaxPartialDepth, DefaultMaxPartialDepth, false},
		{"TemplateCacheEntries", &o.TemplateCacheEntries, DefaultTemplateCacheEntries, true},
		{"TemplateCacheBytes", &o.TemplateCacheBytes, DefaultTemplateCacheBytes, true},
		{"FileCacheBytes", &o.FileCacheBytes, DefaultFileCacheBytes, true},
	} {
		def := option.Default[int]
		if f.off {
			def = option.DefaultOrOff[int]
		}
		if err := def(opNew, "Options."+f.name, f.v, f.def); err != nil {
			return err
		}
	}
	if o.TemplateCacheEntries < 0 || o.TemplateCacheBytes < 0 {
		// The cache needs both bounds: either one negative turns it off.
		o.TemplateCacheEntries, o.TemplateCacheBytes = -1, -1
	}
	o.Logger = option.Logger(o.Logger)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.VERP.Domain != "" && o.VERP.Local == "" {
		o.VERP.Local = DefaultVERPLocal
	}
	return nil
}

// Options configures a Mailer. New copies it; changing an Options after New
// has no effect on the Mailer. Each field says what its zero value means;
// New refuses a negative number, except where the field says what a
// negative value means.
type Options struct {
	// Auth checks every call's account_id and key. It is required: use
	// StaticKeys, or NoAuth when the application authenticates callers itself.
	Auth Authenticator

	// Templates holds the stored templates of SendTemplate, and the
	// partials ({{> name}}) of both operations. Nil: SendTemplate fails
	// with a ValidationError naming the template id fields, and a template
	// that names a partial with one naming its field.
	Templates TemplateStore

	// Concurrency is how many recipients are rendered and handed to the
	// transport at once. Transport waits (network round trips) do not idle
	// the CPU as long as it exceeds GOMAXPROCS. Zero means 4 × GOMAXPROCS,
	// at least 8.
	Concurrency int

	// MaxRecipients is the most recipients a call may have; a call with more
	// fails with ErrTooManyRecipients. Zero means 25,000 (the spec's limit).
	MaxRecipients int

	// MaxMessageBytes is the largest complete message the Mailer hands to the
	// transport. A recipient whose message is larger is invalid with reason
	// message-too-large; images and attachments that alone exceed it fail the
	// call. Zero means 25 MiB.
	MaxMessageBytes int

	// MaxBCC is the most addresses message.bcc may hold. Zero means 100.
	MaxBCC int

	// MaxHeaders is the most custom header fields message.headers may
	// hold; more fail the call with a ValidationError on message.headers.
	// Zero means 100.
	MaxHeaders int

	// MaxTemplateBytes is the largest template source (subject, html, text
	// or a header value). Zero means 512 KiB.
	MaxTemplateBytes int

	// MaxTemplateDepth is the deepest nesting of template blocks. Zero means 32.
	MaxTemplateDepth int

	// MaxRenderBytes is the most bytes one template part may render to for
	// one recipient; more makes the recipient invalid (render-error). Zero
	// means 8 MiB.
	MaxRenderBytes int

	// MaxRenderSteps bounds the work of rendering one part for one recipient
	// (nodes visited and loop iterations); more makes the recipient invalid
	// (render-error). Zero means 1,000,000.
	MaxRenderSteps int

	// StrictParams makes a recipient invalid, with reason missing-param
	// naming the params, when a placeholder ({{x}}) or the value a block
	// iterates or enters ({{#each items}}, {{#with item}}, {{#items}}) has
	// no value; a condition ({{#if x}}, {{#unless x}}) never counts. When
	// false, a missing param renders empty.
	StrictParams bool

	// Logger receives a debug record per call and the output of templates'
	// {{log}}. Nil discards every record (slog.New(slog.DiscardHandler)), as
	// for every Logger of the module (package option).
	Logger *slog.Logger

	// Now gives the Date of a call's messages. Nil means time.Now.
	Now func() time.Time

	// Rand is the source of send ids and MIME boundaries: 40 bytes per
	// call, read under no lock from the calling goroutine. Nil means
	// crypto/rand.Reader. Set it (with Now) for byte-identical output.
	Rand io.Reader

	// TemplateCacheEntries is the most compiled templates the Mailer keeps
	// for later calls, keyed by their source and mode (subject, html, text
	// and header values alike): a call whose templates were all seen before
	// compiles nothing. The least recently used go first. Zero means 1024;
	// a negative value turns the cache off (as does a negative
	// TemplateCacheBytes).
	TemplateCacheEntries int

	// TemplateCacheBytes bounds the memory the cached templates hold, as
	// estimated from their sources (twice the source, plus 512 bytes per
	// mustache and 2 KiB per template); a template larger than that alone
	// is compiled and not kept. Zero means 32 MiB; a negative value turns
	// the cache off.
	TemplateCacheBytes int

	// FileCacheBytes bounds the memory of the Mailer's cache of images and
	// attachments, keyed by their base64 content: a call whose files were
	// seen before (a logo, the same terms) does not check their base64
	// again nor encode them again into lines, and its messages share the
	// cached lines. Each entry counts as its content plus its lines, about
	// twice the base64; the least recently used go first, and a file
	// larger than the bound alone is not kept. Zero means 32 MiB; a
	// negative value turns the cache off.
	FileCacheBytes int

	// DKIM lists the keys every message is signed with, one
	// DKIM-Signature field each (relaxed/relaxed, sha256), after the
	// message is built and before the Transport gets it. The signatures
	// cover From, Reply-To, To, Cc, Subject, Date, Message-ID,
	// MIME-Version, Content-Type and Content-Transfer-Encoding, and
	// List-Unsubscribe, List-Unsubscribe-Post, In-Reply-To and References
	// when the message has them, each oversigned (listed in h= twice,
	// more often than the message has it), so that such a field added in
	// transit breaks the signature. Nil means messages
	// are not signed. New fails for a signer that is not valid (see
	// DKIMSigner). A signature's t= tag is the call's Date (from Now), so
	// signed output is byte-identical given Now and Rand.
	// The signature fields (350 to 450 octets and the signature's base64
	// each) come on top of MaxMessageBytes.
	DKIM []DKIMSigner

	// HTMLOnly turns off the generated text part. When false, a call with
	// html and no text gets a text/plain alternative made from each
	// recipient's rendered html (paragraphs, headings marked "#", list
	// items, table rows, links as "text (url)", no style or script, lines
	// wrapped at 78 characters), so that its messages are
	// multipart/alternative. When true, such messages have the html part
	// only.
	HTMLOnly bool

	// VERP, when its Domain is set, makes each message's envelope sender
	// (MAIL FROM, the Return-Path of the delivered message) carry the
	// recipient's send_id, such as bounces+<send_id>@bounce.example.com,
	// so that a later bounce or DSN can be matched to the recipient's
	// Result with VERP.SendID. The zero VERP is off: the envelope sender
	// is the call's from_email. The From header is the call's either way.
	VERP VERP

	// Helpers are the Mailer's own template helpers, by the name templates
	// call them by ({{money total currency}}): build each with HelperFunc1
	// and its siblings. A name must be an identifier that is not a
	// built-in helper's. New copies the map. Nil means none.
	Helpers map[string]Helper

	// MaxPartialDepth is the longest chain of partials a template may
	// call ({{> a}} whose a calls {{> b}} is a chain of 2); a longer one
	// fails the call with a ValidationError. Zero means 8.
	MaxPartialDepth int

	// Suppressions is the suppression list every call consults, once, in
	// one batched lookup after validation and before any rendering: a
	// listed recipient is rejected with the entry's reason (hard-bounce,
	// soft-bounce, spam, unsub, manual) and gets no message; a listed bcc
	// address is dropped from the envelopes; a lookup that fails refuses
	// the call (ErrSuppressions). Package suppression keeps such lists, in
	// memory or in PostgreSQL. Nil means no list.
	Suppressions Suppressions

	// Unsubscribe, when not nil, gives each recipient's one-click
	// unsubscribe URL (RFC 8058) for list mail: a call whose List-Id
	// names its list (see ListID) and that writes no List-Unsubscribe
	// header of its own gets, in each recipient's message,
	//
	//	List-Unsubscribe: <URL(call.account_id, address, list)>
	//	List-Unsubscribe-Post: List-Unsubscribe=One-Click
	//
	// both DKIM-signed when Options.DKIM is set. A transactional call (no
	// List-Id: a receipt, a password reset) gets none, unless
	// UnsubscribeAllMail is set. A recipient whose URL fails, or is not an
	// https URI, is invalid (render-error) and gets no message. A call
	// that writes List-Unsubscribe itself keeps its own. Package
	// unsubscribe's *Unsubscriber is one, and its handler records the
	// unsubscribe, scoped to the list. Nil means no such headers are
	// added.
	Unsubscribe UnsubscribeURLs

	// UnsubscribeAllMail makes Options.Unsubscribe write its headers into
	// transactional messages too, with an empty list: a one-click POST
	// from such a message then unsubscribes the address from all of the
	// account's mail, receipts included. Off (false) by default, as
	// Gmail's and Yahoo's bulk-sender rules (2024) ask one-click
	// unsubscribe of subscribed and marketing mail and exempt
	// transactional mail: an unsubscribe link in a password reset mostly
	// silences mail the recipient needs.
	UnsubscribeAllMail bool

	// OnEvent, when not nil, receives an Event for each recipient's final
	// Result of Send, SendTemplate and Run that is one (send, deferral,
	// hard_bounce, soft_bounce, reject; see Event), with the call's ctx,
	// right after RunOptions.OnResult gets the Result. Like OnResult it is
	// called from the call's workers, concurrently, and a worker waits for
	// it: it must be safe for concurrent use, and should hand slow work
	// (a database write) elsewhere or batch it. Preview and Validate send
	// nothing and call it never. Nil means none.
	OnEvent func(ctx context.Context, e Event)

	// programHelpers is Helpers as the evaluator takes them, set by New.
	programHelpers map[string]*program.Helper
}
