// Package httpapi serves the mail-sending API's two operations over HTTP,
// exactly as the spec has them, on top of a postroom.Mailer:
//
//	POST /api/1.0/message.send
//	POST /api/1.0/message.send_template
//
// and, with Options.Suppressions, the suppression list's rejects.add,
// rejects.list and rejects.delete (see # Suppression list); with
// Options.Templates, the stored templates' templates.add, update,
// publish, delete, info, list and render (see # Stored templates); with
// Options.Async, the calls run later, listed and steered with calls.list,
// calls.cancel and calls.retry (see # Calls run later); with
// Options.Activity, what happened to each message with messages.search
// and messages.info (see # Message activity).
//
// A Handler is an http.Handler: mount it in the application's own mux,
// behind its own middleware (authentication, tracing, rate limits), at "/"
// or at "/api/1.0/" (it matches the full paths, so mount it without
// http.StripPrefix). The request body is decoded with postroom.DecodeCall,
// the request's context is handed to the Mailer (a client that goes away
// cancels its call), and a call that fails as a whole gets an honest HTTP
// status and a JSON body
//
//	{"status":"error","code":"...","message":"...","field":"..."}
//
// "field" names the offending field's path (such as "message.from_email")
// when there is one; "fields" lists them all when there are several. A call
// that was accepted is answered 200 with one postroom.Result per
// recipient, in the order of the call's recipients, even when some
// recipients failed: their Result says why.
//
// # Errors
//
// The status and code of every answer but 200 (for the Go errors, see the
// postroom package's # Errors):
//
//	status  code                     when
//	400     invalid_json             the body is not one JSON object of the spec's shape: bad syntax,
//	                                 a value of the wrong type, a field the spec does not have
//	                                 (named in "field", such as "message.htmll"), a body cut short
//	400     validation_error         a field's value is refused (*postroom.ValidationError); at every
//	                                 endpoint, an account_id over 255 bytes, not UTF-8 or holding a
//	                                 control character (a NUL), whatever the Authenticator
//	400     no_recipients            postroom.ErrNoRecipients
//	400     too_many_recipients      postroom.ErrTooManyRecipients
//	400     unknown_template         a stored template or partial is not found (postroom.ErrTemplateNotFound)
//	400     template_syntax          a template does not compile (postroom.ErrTemplateSyntax); from
//	                                 templates.*, with "line" and "column"
//	400     invalid_idempotency_key  the Idempotency-Key header is empty, too long, or repeated
//	401     invalid_key              postroom.ErrUnauthorized: the key is not valid for the account
//	404     not_found                no such endpoint; with Options.Async, no such call id, or (calls.*)
//	                                 a call of another account; (messages.info) no such message in the account
//	404     unknown_template         (templates.*) no such template in the account
//	404     unknown_version          (templates.publish) the template keeps no such version
//	409     template_exists          (templates.add) the name is taken
//	405     method_not_allowed       not POST (not GET for a call's status); with an Allow header
//	408     timeout                  the body did not arrive within the server's read timeout
//	409     idempotency_conflict     the Idempotency-Key was used with another body
//	409     idempotency_in_progress  a call with this Idempotency-Key is running; with Retry-After
//	413     too_large                the body is over Options.MaxBodyBytes
//	415     unsupported_media_type   the Content-Type is not application/json (charset utf-8 or none)
//	500     internal                 anything else, such as a template store that fails; the
//	                                 detail is only in the log
//	501     not_configured           message.send_template with Options.NoTemplateStore
//	503     busy                     Options.MaxInflightBytes or Options.MaxIdempotentCalls reached;
//	                                 with Retry-After
//
// When several fields are refused, the first unknown template, else the
// first template syntax error, else the first refused field gives the code.
//
// Two call-level errors still answer 200 with every recipient's result,
// because the results are honest and a retry needs them: ctx done
// mid-call (Options.CallTimeout, a shutting-down server), where the
// recipients not finished are deferred (timeout or canceled), and
// postroom.ErrTransportUnusable, where those not handed over are deferred
// (connection-failed). The cause is in the log.
//
// # Idempotency
//
// A call with an Idempotency-Key header (as Stripe's, Resend's and
// SparkPost's APIs have it) runs through idempotency.RunWith over
// Options.Idempotency: a retry with the same key and body gets the
// recorded results and sends nothing again, on any instance sharing the
// store; the same key with another body is 409 idempotency_conflict, and
// while the first call runs, 409 idempotency_in_progress. A retry after
// an instance died mid-call sends only to the recipients that had no
// result, and reports those whose message was handed over unknown
// (postroom.ReasonInterrupted). Records past idempotency.DefaultRetention
// are deleted at most once an hour, on a request: the Handler starts no
// goroutine.
//
// # Logging
//
// The Handler logs one record per request to Options.Logger (msg=request:
// method, path, status, bytes, elapsed, a request_id, the account_id and
// the count of each status; never the key, a header or the body). Each
// recipient's result is logged as soon as it is final, while the call
// runs (msg=result, with the request_id, the recipient's index in the
// call, its status, reason and send_id, not its address; see ResultLog),
// so that a client that goes away, or a server that dies, mid-call never
// leaves unknown who was sent. When the answer does not reach the client
// and the results were not logged as they completed, they are logged at
// the end, addresses included (msg="result not delivered to the client").
//
// # Memory
//
// A decoded call takes several times its body in memory (a body of tiny
// param keys about ten times). Options.MaxInflightBytes bounds the bytes
// of the request bodies whose calls are in flight; a request past it is
// answered 503 busy with Retry-After at once rather than queued.
//
// # Suppression list
//
// With Options.Suppressions, the Handler also serves the suppression list
// (package suppression) in Mandrill's shapes, each a POST of a JSON object
// with the account's "key" and "account_id", checked with the Mailer's
// Options.Auth as a call's are:
//
//	POST /api/1.0/rejects.add     {"email", "comment", "scope", "list"}
//	                              →  {"email", "added": true, "scope", "list"}
//	POST /api/1.0/rejects.list    {"email", "reason", "scope", "list", "include_expired", "limit", "cursor"}
//	                              →  [{"email", "reason", "detail", "send_id", "created_at",
//	                                   "expires_at", "expired", "scope", "list"}, ...]
//	POST /api/1.0/rejects.delete  {"email", "scope", "list"}
//	                              →  {"email", "deleted": true|false, "scope", "list"}
//
// An entry has a scope, beside Mandrill's fields: which of the address's
// mail it silences, "all" (every message), "lists" (every list message:
// a message whose List-Id names its list) or "list" (the messages of one
// list, "list" its list id, such as "news.shop.example.com"). An address
// has an entry per scope, and per list; see package suppression.
//
// rejects.add lists the address by hand (reason manual, never expiring,
// the comment as its detail) in the scope given, "all" when none,
// replacing the entry of that scope (and list) if it had one, and no
// other. rejects.list's "email" is an address prefix (a whole address
// selects it, and the addresses that begin with it); "scope" and "list"
// select the entries of a scope and of a list (a list alone: scope
// "list"); "include_expired" adds the expired entries; "expires_at" is
// null for an entry that never expires. A list answers at most "limit"
// entries (default 100, at most 1000), in (address, scope, list) order:
// when there are more, the Postroom-Next-Cursor header holds the "cursor"
// of the next page. rejects.delete without a scope deletes every entry of
// the address; with one, that entry alone ("list" with scope "list").
// An unknown field, such as Mandrill's "subaccount", is 400 invalid_json;
// a malformed address, reason, scope, list, limit or cursor 400
// validation_error naming it (an "account_id" too: see # Errors). Without
// Options.Suppressions the three paths are 404 not_found.
//
// # Message activity
//
// With Options.Activity (an events.Activity, usually the events store the
// Mailer's Options.OnEvent feeds), the Handler serves each message's
// record, each a POST of a JSON object with the account's "key" and
// "account_id", checked as the rejects endpoints check them:
//
//	POST /api/1.0/messages.search  {"email", "send_id", "call_id", "list", "state", "date_from", "date_to", "limit", "cursor"}
//	                               →  [message, ...] (newest first)
//	POST /api/1.0/messages.info    {"id"}  →  message
//
// where a message is {"_id", "ts", "state", "email", "sender", "subject",
// "template", "call_id", "templates", "list", "smtp_events", "timeline"},
// with Mandrill's field names where they mean the same: "_id" is the send
// id (empty for a rejected message, never made, and a queued one, not
// made yet), "ts" when it was first tried or queued (Unix seconds),
// "state" one of queued, sent, deferred, rejected, bounced, soft-bounced,
// spam and unsub (from its latest event), "sender" the call's from
// address, "subject" the rendered subject, "template" the stored template
// it was made from (its html one) or null, "smtp_events" its attempts
// [{"ts", "type" (sent or deferred), "diag"}], and "timeline" all its
// events, oldest first, as postroom.Event has them (queued, deferrals with
// reason and reply, the send or reject, bounces with status and
// diagnostic, complaints, unsubscribes).
//
// No body is kept unless the application keeps them (events.KeepBodies
// around the Mailer's transport, with SQLOptions.KeepBodies or
// MemoryOptions.KeepBodies); when Options.Activity can read them back,
//
//	POST /api/1.0/messages.content {"id"}  →  {"_id", "raw_msg"}
//
// answers the message as it was handed over, or 404 not_found when none is
// kept for the account.
//
// messages.search's "email" is a whole address, in any letter case;
// "date_from" and "date_to" are YYYY-MM-DD (UTC; "date_to" takes in its
// whole day) or RFC 3339 times; Mandrill's "query" expression is not
// taken (an unknown field is 400 invalid_json). An answer holds at most
// "limit" messages (default 100, at most 1000): when there are more, the
// Postroom-Next-Cursor header holds the "cursor" of the next page. A
// malformed state, date, limit or cursor is 400 validation_error naming
// it; messages.info of an id the account has no message of is 404
// not_found. Without Options.Activity the two paths are 404 not_found.
//
// # Stored templates
//
// With Options.Templates (a templatestore.Manager, usually the store the
// Mailer reads), the Handler serves the templates of message.send_template
// in Mandrill's shapes, each a POST of a JSON object with the account's
// "key" and "account_id", checked as the rejects endpoints check them:
//
//	POST /api/1.0/templates.add      {"name", "code", "publish"}  →  template
//	POST /api/1.0/templates.update   {"name", "code", "publish"}  →  template
//	POST /api/1.0/templates.publish  {"name", "version"}  →  template
//	POST /api/1.0/templates.delete   {"name"}  →  template, with "versions"
//	POST /api/1.0/templates.info     {"name"}  →  template, with "versions"
//	POST /api/1.0/templates.list     {}  →  [template, ...] (by name)
//	POST /api/1.0/templates.render   {"name" or "code", "published", "subject", "params", "as"}
//	                                 →  {"subject", "html" or "text", "missing"}
//
// where a template is {"name", "slug", "code", "publish_code",
// "publish_version", "published_at", "created_at", "updated_at"}, and
// "versions" lists the kept published versions, newest first, each
// {"version", "code", "published_at", "from_version"}. "name" (and "slug",
// the same) is the id a call names in message.html_template_id or
// text_template_id; "code" is the draft, "publish_code" the live version
// message.send_template uses (null until the template is published). add
// and update write the draft and, with "publish": true, publish it;
// publish publishes the draft, or, with "version", a kept version again (a
// rollback: a new version, whose "from_version" it is). A template holds
// one source: Mandrill's "text" is refused (store the text version as a
// template of its own), and so are its "subject", "from_email" and
// "labels", as unknown fields. render renders the draft (the live version
// with "published": true, or "code", a source not stored) for one
// recipient with "params", as html (or as text with "as": "text"), as the
// Mailer would, partials included.
//
// A source is compiled by the Mailer (postroom.Mailer.CheckTemplate)
// before it is saved: one that does not compile is 400 template_syntax,
// naming "code", with the position in "line" and "column" (both left out
// when the problem has none, such as a source over the Mailer's
// MaxTemplateBytes). A template not found is 404 unknown_template, a
// version not kept 404 unknown_version, a name taken by templates.add 409
// template_exists; a name that is not 1 to 255 of A-Z a-z 0-9 . _ - is 400
// validation_error naming "name". Bodies are bounded at 8 MiB. Without
// Options.Templates the seven paths are 404 not_found.
//
// # Calls run later
//
// Options.Async is the extension point for calls run later, outside the
// request (the "send later" feature: a durable outbox). With it, a request
// with the header Prefer: respond-async (RFC 7240) is handed to
// Async.Enqueue and answered 202 Accepted with the call's id and a
// Location of GET /api/1.0/calls/{id}?account_id=ACCOUNT, which answers
// the call's state and, once it is done, its results (postroom.CallStatus)
// to a request carrying the account's key in the X-Postroom-Key header
// (KeyHeader), authenticated as the call's key was (postroom.Options.Auth):
// the results name the recipients. Without the key or the account_id it
// answers 401 invalid_key, as with a wrong key; a call of another account
// is 404 not_found, as an unknown id is. A client keeps the key it sent the
// call with and follows the Location:
//
//	GET /api/1.0/calls/9f…?account_id=shop
//	X-Postroom-Key: the-shop-key
//
// When the queue
// reads an event log (package outbox with outbox.Options.Events), a done
// call's answer also has "later": what came back after its messages left,
// the latest event of each that has one (hard_bounce, soft_bounce, spam,
// unsub, deferral), each naming its message by "send_id"; the results
// keep the spec's shape and their final status. Without Options.Async
// the preference is ignored, as RFC 7240 allows: the call runs while the
// request waits.
//
// When Options.Async is also an AsyncSteering (package outbox's is), the
// answer of GET /api/1.0/calls/{id} lists, while the call is not done,
// each recipient still without a final result ("waiting": index, email,
// state new|sending|deferred, the last attempt's status, code and reason,
// the number of attempts, the time of the next one), and the Handler
// serves three POST endpoints, with the account's "key" and "account_id"
// as the rejects endpoints take them, over that account's calls only (a
// call of another account is 404 not_found, as an unknown id is):
//
//	POST /api/1.0/calls.list    {"limit", "cursor"}  →  [{"id", "operation", "started_at",
//	                                                       "recipients", "state", "counts"}, ...]
//	POST /api/1.0/calls.cancel  {"id", "reason"}  →  {"id", "canceled": n}
//	POST /api/1.0/calls.retry   {"id"}  →  {"id", "retried": n}
//
// calls.list answers the account's calls newest first, at most "limit"
// (the Async's default and maximum: outbox.DefaultCallsLimit and
// outbox.MaxCallsLimit); when there are more, the Postroom-Next-Cursor
// header holds the "cursor" of the next page. calls.cancel makes every
// recipient not yet handed over final, never sent (rejected, reason
// "call-canceled: " and the given reason), and answers how many; a
// recipient whose message may be on its way keeps its attempt's outcome.
// calls.retry has the recipients waiting for a retry tried now, and
// answers how many. A missing "id", an "id" or "reason" with a control
// character or too long (255 and 1000 bytes), a bad "limit" or "cursor" is
// 400 validation_error naming it. Without an
// AsyncSteering the three paths are 404 not_found.
//
// This package does not authenticate HTTP requests beyond the call's own
// key (postroom.Options.Auth), set CORS headers, or serve TLS: the
// application's middleware and http.Server do.
package httpapi
