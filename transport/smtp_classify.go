package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/textproto"
	"strings"

	"github.com/postroom/postroom"
)

// setupRefused classifies a reply that refuses a step of session setup:
// 4xx is temporary; 5xx makes the transport unusable, since the same
// session setup would fail for every message and the recipient was not
// refused.
func setupRefused(stage string, code int, msg string) error {
	de := replyError(postroom.DeliveryTemporary, code, msg, true)
	if code/100 == 5 {
		de.Err = fmt.Errorf("%s refused: %w", stage, postroom.ErrTransportUnusable)
	} else {
		de.Err = fmt.Errorf("%s refused", stage)
	}
	return de
}

// tlsError classifies a failed TLS handshake: a certificate that does not
// verify, or a TLS alert, is a configuration error; a lost connection is
// temporary.
func tlsError(ctx context.Context, err error) error {
	if isTLSError(err) {
		return &postroom.DeliveryError{Err: fmt.Errorf("TLS handshake: %w: %w", err, postroom.ErrTransportUnusable)}
	}
	return ctxError(ctx, fmt.Errorf("TLS handshake: %w", err))
}

func isTLSError(err error) bool {
	var (
		cve   *tls.CertificateVerificationError
		alert tls.AlertError
		rhe   tls.RecordHeaderError
		ua    x509.UnknownAuthorityError
		he    x509.HostnameError
		ci    x509.CertificateInvalidError
	)
	return errors.As(err, &cve) || errors.As(err, &alert) || errors.As(err, &rhe) ||
		errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// replyKind is the kind of a refusal by reply code alone: permanent for
// 5xx, temporary otherwise. Callers that know better (a refused session
// setup, too many recipients) state their own kind.
func replyKind(code int) postroom.DeliveryKind {
	if code/100 == 5 {
		return postroom.DeliveryPermanent
	}
	return postroom.DeliveryTemporary
}

// replyError is the DeliveryError of kind for an SMTP reply. The enhanced
// status code is split off the text when the server advertised
// ENHANCEDSTATUSCODES (RFC 2034) and it matches the reply's class.
func replyError(kind postroom.DeliveryKind, code int, msg string, enhanced bool) *postroom.DeliveryError {
	de := &postroom.DeliveryError{Kind: kind, Code: code}
	text := msg
	if enhanced {
		if e, rest, ok := strings.Cut(text, " "); ok && isEnhanced(e, code) {
			de.Enhanced, text = e, rest
		} else if isEnhanced(text, code) {
			de.Enhanced, text = text, ""
		}
	}
	de.Text = oneLine(text)
	return de
}

// isEnhanced reports whether s is class.subject.detail (RFC 3463) of the
// reply code's class.
func isEnhanced(s string, code int) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || len(parts[0]) != 1 || parts[0][0] != byte('0'+code/100) {
		return false
	}
	for _, p := range parts[1:] {
		if len(p) == 0 || len(p) > 3 {
			return false
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
	}
	return true
}

// maxReplyText caps DeliveryError.Text.
const maxReplyText = 512

// oneLine makes a reply text one line (a multi-line reply's lines joined
// with spaces, CR and LF removed) of at most maxReplyText bytes of valid
// UTF-8.
func oneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
	if len(s) > maxReplyText {
		s = s[:maxReplyText]
	}
	return strings.ToValidUTF8(s, "")
}

// endOfData is the outcome of the reply after the final dot or to BDAT
// LAST.
func endOfData(code int, msg string, enhanced bool, refused []postroom.RefusedRecipient) outcome {
	switch code / 100 {
	case 2:
		if len(refused) > 0 {
			return outcome{keep: true, err: &postroom.PartialError{Refused: refused}}
		}
		return outcome{keep: true}
	case 4, 5:
		return outcome{keep: code != 421, err: replyError(replyKind(code), code, msg, enhanced)}
	}
	return outcome{err: replyError(postroom.DeliveryUncertain, code, msg, enhanced)}
}

// dataError is the outcome of a refused DATA command.
func dataError(code int, msg string, enhanced bool) outcome {
	if code/100 != 4 && code/100 != 5 {
		return outcome{err: replyError(postroom.DeliveryTemporary, code, msg, enhanced)}
	}
	return outcome{keep: code != 421, err: replyError(replyKind(code), code, msg, enhanced)}
}

func firstErr(a, b *postroom.DeliveryError) *postroom.DeliveryError {
	if a != nil {
		return a
	}
	return b
}

// isProtocolError reports whether err says the server replied, but not as
// SMTP allows: a malformed reply, one over the bounds, one nobody asked
// for.
func isProtocolError(err error) bool {
	var pe textproto.ProtocolError
	return errors.As(err, &pe) || errors.Is(err, ErrReplyTooLong) || errors.Is(err, ErrUnexpectedReply)
}

// withCtx makes err, from an operation cut short by a done ctx, wrap
// ctx's error, keeping whether the outcome is uncertain.
func withCtx(ctx context.Context, err error) error {
	var de *postroom.DeliveryError
	if errors.As(err, &de) && de.Code == 0 {
		return &postroom.DeliveryError{Kind: de.Kind, Err: fmt.Errorf("%w (%v)", ctx.Err(), de.Err)}
	}
	return err
}
