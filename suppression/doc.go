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
//   - SQL keeps it in PostgreSQL (tables postroom_suppressions and
//     postroom_suppression_soft_bounces), over the application's
//     *pgxpool.Pool, shared by every instance. Migrate creates the tables
//     and is safe when instances start at once.
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
//	observation   listed                                  expires
//	HardBounce    at once (hard-bounce)                   never
//	SoftBounce    at the 3rd within 7 days (soft-bounce)  7 days after the 3rd
//	Complaint     at once (spam)                          never
//	Unsubscribe   at once (unsub)                         never
//	Add           as given (manual by default)            as given (never by default)
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
// replaces whatever is there. Expired entries stay listed (List with
// IncludeExpired) for reference, as Mandrill keeps them, until Delete or
// Prune (Memory.Prune, SQL.Prune: run it daily to drop expired entries
// and soft bounces too old to count).
//
// # Accounts
//
// Every call is scoped by account id: one account never sees nor
// suppresses another's addresses. An account id is 1 to 255 bytes.
package suppression
