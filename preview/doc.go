// Package preview serves a web page on which a person sees what a call
// would send, recipient by recipient, before anything is sent: an
// http.Handler over postroom's Mailer.Preview.
//
// The author pastes a message.send or message.send_template call body (or
// uploads it as a file, or names stored templates and an account id in
// the form), picks recipients, and sees each recipient's message as it
// would arrive: the subject, the html in a sandboxed iframe (no scripts,
// forms, popups or navigation of the page) with its cid: images shown, the
// text part, the header fields, the attachments, the params each template
// part references, the params missing for the recipient highlighted, and
// the Result the recipient would get. A call refused as a whole is shown
// as its refusals, each with the field and, for a template or a JSON
// syntax error, the line and column.
//
// # What it owns
//
// The page, its form and its one stylesheet, all served from the binary
// (embedded): the page makes no request to any other origin and loads no
// script. Its Content-Security-Policy allows nothing but its own
// stylesheet, inline styles (which e-mail html relies on) and data: images
// (the cid: images, inlined), so that a message's remote images and fonts
// are not fetched either: the preview shows what a reader who blocks
// remote content sees, and tells no tracker that a preview happened.
//
// The Handler uses relative URLs only, so it can be mounted under any
// prefix with http.StripPrefix:
//
//	page, err := preview.New(m, preview.Options{})
//	if err != nil { ... }
//	mux.Handle("/preview/", adminOnly(http.StripPrefix("/preview", page)))
//
// It authenticates nobody itself: mount it behind the application's own
// (admin) authentication. Each call is still checked by the Mailer's
// Options.Auth with the key in the call body, as a real call would be; to
// preview without keys, give New a Mailer made with postroom.NoAuth and
// the same Options.Templates. POSTs are checked by
// http.CrossOriginProtection, so that another site cannot submit the form
// in an admin's browser.
//
// It never sends: Mailer.Preview makes no Transport call. It imports the
// standard library, postroom and postroom's template package (for the
// line and column of a template error), never a transport, a template
// store, a browser or anything from outside the module; it keeps no state
// between requests (the call body travels in the form), writes no file of
// its own and starts no goroutine.
package preview
