// Package console serves the pages on which the people who run an
// application answer support questions about its mail ("did Ann get her
// password reset?") and steer it: an http.Handler the application mounts
// behind its own authentication, as River UI is mounted.
//
// It shows, each when Options gives its store:
//
//   - Messages (Options.Activity, events.Activity): a search by address
//     or send id, newest first, and each message's timeline: its
//     attempts with their reasons and replies, the send, and what came
//     back later (bounces with status and diagnostic, complaints,
//     unsubscribes).
//   - The suppression list (Options.Suppressions, a suppression.List):
//     filtered by address, scope, reason and list; an entry is removed
//     after a confirmation page.
//   - Queued calls (Options.Calls, package outbox's Outbox.AccountCalls()): the
//     calls sent later, each with its state and counts, the recipients
//     still waiting with their last reason and next attempt, its results
//     once done; cancel (after a confirmation) and retry.
//   - Templates (Options.Templates, a templatestore.Manager): the list,
//     one template's draft, live version and kept versions, a render
//     with sample params (Options.Renderer) and the publish of its draft.
//   - The preview page (Options.Preview, package preview's Handler),
//     served under the console at preview/.
//
// # Mounting
//
// Every link is relative, so the Handler works under any prefix that
// ends in a slash, with http.StripPrefix:
//
//	c, err := console.New(console.Options{
//		Account:      accountOf, // whose mail the request's person looks after
//		Activity:     eventLog,
//		Suppressions: list,
//		Calls:        ob.AccountCalls(),
//	})
//	if err != nil { ... }
//	mux.Handle("/console/", adminOnly(http.StripPrefix("/console", c)))
//
// It authenticates nobody: adminOnly is the application's. Every page
// is of one account, the one Options.Account returns for the request.
//
// # Security
//
// The pages are plain HTML made with html/template, so every value that
// came with the mail (an address, a bounce's diagnostic, a template's
// source, a rendered subject) is shown as text; they load one
// stylesheet, served by the Handler, and no script: they work without
// JavaScript and make no request to another origin. Every answer has a
// Content-Security-Policy that allows the console's own stylesheet and
// nothing else (default-src 'none'; form-action 'self'; frame-ancestors
// 'none'; base-uri 'none'), X-Content-Type-Options: nosniff,
// Referrer-Policy: same-origin and Cache-Control: no-store.
//
// A GET never changes anything. Each change (remove a suppression,
// cancel or retry a call, publish a template) is a POST, and every
// request other than GET, HEAD and OPTIONS is refused with 403 unless
// the browser says it comes from the console's own origin:
// http.CrossOriginProtection checks the Sec-Fetch-Site header that every
// current browser sends, or, without it, Origin against Host. A request
// with neither header is not a browser's cross-site form (those carry
// one or the other), so no token is needed. The removal of a suppression
// and the cancel of a call ask for a confirmation first.
//
// # Limits
//
// A list page shows Options.PageSize rows (DefaultPageSize, at most
// MaxPageSize) and links to the next page with the store's cursor; a
// call's waiting recipients and results are cut to the same size; the
// render form takes at most 1 MiB.
package console
