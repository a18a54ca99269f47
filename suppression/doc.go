// Package suppression keeps the suppression list of postroom: per account,
// the addresses a Mailer must not send to, because they bounced,
// complained, unsubscribed or were listed by hand. A Mailer consults it
// through postroom.Options.Suppressions, once per call, in one batched
// lookup; a listed recipient is rejected with the entry's reason
// (hard-bounce, soft-bounce, spam, unsub, manual) and gets no message.
//
// Two lists are provided, both satisfying List and postroom.Suppressions:
//
//   - Memory keeps the list in maps, for tests and single-process
//     applications; it is lost when the process ends.
//   - SQL keeps it in a database (tables postroom_suppressions and
//     postroom_suppression_soft_bounces), over an sqldb.DB: PostgreSQL
//     (sqldb/pgxdb, the application's *pgxpool.Pool), shared by every
//     instance, or SQLite (sqldb/sqlitedb), for one process. Migrate
//     creates the tables and is safe when instances start at once.
//
// # Addresses
//
// An address is compared as the whole address lower-cased, as the hosted
// services do (Mandrill, Postmark, SES): Ann@Example.com and
// ann@example.com are one entry. Local parts are case-sensitive in
// principle (RFC 5321 §2.4), but no mailbox provider makes them so, and
// a list that missed an address because of its case would mail a
// complainer again. Entries keep the address lower-cased. It must be
// ASCII, as a Mailer sends it: an internationalized domain in its A-label
// form (xn--...).
//
// # Policy
//
// Observe turns what was heard back (a bounce, a complaint, an
// unsubscribe) into entries, by the list's Policy:
//
//	observation   listed                                  expires                      scope
//	HardBounce    at once (hard-bounce)                   never                        all mail
//	SoftBounce    at the 3rd within 7 days (soft-bounce)  7 days after the 3rd         all mail
//	Complaint     at once (spam)                          never                        all lists (about a list message), else all mail
//	Unsubscribe   at once (unsub)                         never                        its list, else all lists
//	Add           as given (manual by default)            as given (never by default)  as given (all mail by default)
//
// The soft-bounce figures are Policy's defaults (SoftBounces, SoftWindow,
// SoftExpiry). They follow the hosted services: Mandrill lists a soft
// bounce for a few days and lets it expire, never hardening it; SES and
// Postmark list hard bounces and complaints for good. A soft bounce is a
// full mailbox, a message judged spam, a policy refusal: the address may
// work tomorrow, so one is not enough to silence it, and the entry
// expires.
//
// An entry that never expires is not replaced by an observation (the
// first cause stays); an expiring one is replaced by a hard bounce, a
// complaint or an unsubscribe, and an expired one by any entry. Add
// replaces whatever is there. Each of these meets the entry of its own
// scope and list only (see Scopes). Expired entries stay listed (List with
// IncludeExpired) for reference, as Mandrill keeps them, until Delete or
// Prune (Memory.Prune, SQL.Prune: run it daily to drop expired entries
// and soft bounces too old to count).
//
// # Scopes
//
// A call whose List-Id names its list sends list mail (postroom.ListID);
// every other call is transactional (receipts, password resets). Each
// entry has a scope, the mail it silences: postroom.ScopeAll every
// message, ScopeLists every list message, ScopeList the messages of one
// list (Entry.List, its list id). An entry's key is (account, address,
// scope, list): an address has an entry per scope, and per list, and a
// Mailer's one lookup (Suppressed) returns them all; the Mailer keeps
// those that cover the call's message (postroom.Suppression.Covers).
//
// Observe derives the scope from what came back (the table above), or
// takes Observation.Scope: the unsubscribe page's "from all lists". A
// bounce says the mailbox fails, whatever the message: all mail. An
// unsubscribe and a complaint about a newsletter are about newsletters:
// the recipient still expects their receipts. A complaint about a
// receipt leaves nothing safe to send. The reason codes stay Mandrill's;
// an observed entry's detail names the list of its message ("list
// news.shop.example.com: ...").
//
// An observation meets the entry of its own scope and list only, so a
// permanent all-mail entry makes a later hard bounce a no-op, and a list
// unsubscribe is recorded beside it all the same: it must hold when the
// bounce's entry is deleted.
//
// A list id is checked here as postroom checks a call's List-Id (RFC
// 2919: a dot-atom with at least one dot, at most 255 octets, compared
// lower-cased; angle brackets around it are taken off); the check is
// written again in this package, the root's being unexported.
//
// Entries made before scopes (schema version 1) are migrated by Migrate
// (version 2): an unsub entry becomes ScopeLists, since the one-click
// link that made it recorded no list, and all lists stops the
// newsletters and lets the receipts through, as the recipient expects;
// every other entry becomes ScopeAll, as it was.
//
// # Accounts
//
// Every call is scoped by account id: one account never sees nor
// suppresses another's addresses. An account id is 1 to 255 bytes.
package suppression
