// Package unsubscribe makes and honours one-click unsubscribe links (RFC
// 8058): a signed token per (account, address) in an https URL that a
// message's List-Unsubscribe header carries, and an http.Handler that, on
// the mailbox provider's POST of "List-Unsubscribe=One-Click", verifies
// the token and records the unsubscribe (a suppression.Unsubscribe
// observation, and an unsub event).
//
// A GET of the URL (a person following the link, or a link scanner, which
// fetches every URL it finds) only shows a confirmation page whose button
// POSTs the same form; it never unsubscribes.
//
// # Tokens
//
// A token is KEYID.PAYLOAD.MAC, each part URL-safe: PAYLOAD (base64url)
// holds the account id, the address and the expiry; MAC is HMAC-SHA-256
// under the key named KEYID, over the package's context string, KEYID and
// PAYLOAD, cut to 128 bits. Anyone can read a token (it names the address
// it unsubscribes, as the link in a message does anyway); nobody without
// the key can make or alter one: a changed byte is refused
// (ErrInvalidToken).
//
// Expiry: a token is honoured until Options.TTL after it was made (a year
// by default), since people unsubscribe from old messages; an expired one
// is refused (ErrExpiredToken) and the page says so.
//
// Key rotation: Options.Keys[0] signs, and every key of Options.Keys
// verifies the tokens naming its id. To rotate, put the new key first and
// keep the old one until TTL after it stopped signing (no token it signed
// is then still valid), then drop it. A token naming a key not in Keys is
// invalid.
//
// # With a Mailer
//
// Set the Unsubscriber as the Mailer's Options.Unsubscribe: every call
// that writes no List-Unsubscribe header of its own then gets, in each
// recipient's message,
//
//	List-Unsubscribe: <URL(account_id, address)>
//	List-Unsubscribe-Post: List-Unsubscribe=One-Click
//
// (DKIM-signed with the message), and a recipient whose URL cannot be made
// is invalid. Serve the Unsubscriber at Options.BaseURL's path on the same
// suppression list the Mailer consults, and the next call rejects an
// address that unsubscribed (unsub).
//
// A call may still write the headers itself, with the URL as a
// recipient's param:
//
//	List-Unsubscribe: <{{unsubscribe_url}}>
//	List-Unsubscribe-Post: List-Unsubscribe=One-Click
//
// with each recipient's unsubscribe_url from Unsubscriber.URL(account,
// address); the Mailer then adds nothing.
package unsubscribe
