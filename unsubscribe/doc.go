// Package unsubscribe makes and honours one-click unsubscribe links (RFC
// 8058) for list mail: a signed token per (account, address, list) in an
// https URL that a message's List-Unsubscribe header carries, and an
// http.Handler that, on the mailbox provider's POST of
// "List-Unsubscribe=One-Click", verifies the token and unsubscribes the
// address from that list alone (a suppression.Unsubscribe observation of
// postroom.ScopeList, and an unsub event).
//
// A GET of the URL (a person following the link, or a link scanner, which
// fetches every URL it finds) never unsubscribes: it shows a page naming
// the list and the address, with two choices, each a form that POSTs to
// the same URL: this list (the one-click form), or all lists of this
// sender (postroom.ScopeLists: every list message, transactional mail
// such as receipts left alone). The page is plain HTML: no script, no
// fetch of anything, a Content-Security-Policy that allows only its own
// style and forms, the list and address escaped.
//
// # Tokens
//
// A token is KEYID.PAYLOAD.MAC, each part URL-safe: PAYLOAD (base64url)
// starts with its version byte; MAC (base64url) is HMAC-SHA-256 under the
// key named KEYID, over the version's context string
// ("postroom-unsubscribe-v1" or "postroom-unsubscribe-v2"), a zero byte,
// KEYID, a zero byte and PAYLOAD's text, cut to 128 bits. The payload of
// version 2, the one Token makes, is
//
//	2, expiry (8 bytes, Unix seconds, big-endian),
//	len(account) (1 byte), account, len(address) (1 byte), address, list
//
// Anyone can read a token (it names the address it unsubscribes, as the
// link in a message does anyway); nobody without the key can make or
// alter one: a changed byte, the list's included, is refused
// (ErrInvalidToken).
//
// What a token means (Verify's Subscription.Scope):
//
//   - Version 2 with a list L (a list message's token): the one-click POST
//     unsubscribes the address from L alone (postroom.ScopeList); the
//     page's second choice from all lists (postroom.ScopeLists).
//   - Version 2 with no list (a transactional message's token, made only
//     under postroom.Options.UnsubscribeAllMail): the one-click POST
//     unsubscribes the address from all of the account's mail
//     (postroom.ScopeAll), receipts included; its page says so and offers
//     that one choice.
//   - Version 1 (account and address, the tokens made before tokens named
//     a list): still verified, never made. Its one-click header's list
//     was not recorded, so it means all lists (postroom.ScopeLists): that
//     keeps newsletters away and lets receipts through. Its page offers
//     that one choice.
//
// The versions cannot be confused: each has its own context string in
// the MAC, and the version byte, which picks the context, is inside the
// MAC'd payload, so a version 1 token is only ever read as version 1.
//
// Expiry: a token is honoured until Options.TTL after it was made (a year
// by default), since people unsubscribe from old messages; an expired one
// is refused (ErrExpiredToken) and the page says so.
//
// Key rotation: Options.Keys[0] signs, and every key of Options.Keys
// verifies the tokens naming its id, of either version. To rotate, put the
// new key first and keep the old one until TTL after it stopped signing
// (no token it signed is then still valid), then drop it. A token naming
// a key not in Keys is invalid.
//
// # With a Mailer
//
// Set the Unsubscriber as the Mailer's Options.Unsubscribe: every list
// call (one whose List-Id names its list, postroom.ListID) that writes no
// List-Unsubscribe header of its own then gets, in each recipient's
// message,
//
//	List-Unsubscribe: <URL(account_id, address, list)>
//	List-Unsubscribe-Post: List-Unsubscribe=One-Click
//
// (DKIM-signed with the message), and a recipient whose URL cannot be made
// is invalid. A transactional call (no List-Id) gets no such header,
// unless the Mailer's Options.UnsubscribeAllMail asks for it: its URL
// then names no list and unsubscribes from all mail. Serve the
// Unsubscriber at Options.BaseURL's path on the same suppression list the
// Mailer consults, and the next list call of that list rejects an address
// that unsubscribed from it (unsub), while the account's other lists and
// its transactional mail still reach it.
//
// A call may still write the headers itself, with the URL as a
// recipient's param:
//
//	List-Unsubscribe: <{{unsubscribe_url}}>
//	List-Unsubscribe-Post: List-Unsubscribe=One-Click
//
// with each recipient's unsubscribe_url from Unsubscriber.URL(account,
// address, list); the Mailer then adds nothing.
package unsubscribe
