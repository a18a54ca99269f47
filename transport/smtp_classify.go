package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"strings"

	"github.com/postroom/postroom/delivery"
	"github.com/postroom/postroom/internal/replytext"
)

// setupRefused classifies a reply that refuses a step of session set-up:
// 4xx is temporary; 5xx makes the transport unusable, since the same
// set-up would fail for every message and the recipient was not refused.
func setupRefused(code int, msg string) error {
	de := replyError(delivery.DeliveryTemporary, code, msg, true)
	if code/100 == 5 {
		de.Err = delivery.ErrTransportUnusable
	}
	return de
}

// injected is the error of plaintext found after the 220 reply to
// STARTTLS.
func injected() error {
	return unusable("relay sent plaintext after its 220 reply to STARTTLS (STARTTLS injection)", ErrSTARTTLSInjection)
}

// tlsError classifies a failed TLS handshake: a certificate that does not
// verify, or a TLS alert, is a configuration error, with Text saying
// which; a lost connection is temporary. Plaintext SMTP reply lines where
// the server's first TLS record should be, after STARTTLS, are the
// STARTTLS injection arriving a little late.
func tlsError(ctx context.Context, err error, afterSTARTTLS bool) error {
	var rhe tls.RecordHeaderError
	if afterSTARTTLS && errors.As(err, &rhe) && looksLikeReply(rhe.RecordHeader[:]) {
		return injected()
	}
	if why := tlsRefusal(err); why != "" {
		return &delivery.DeliveryError{Text: why, Err: fmt.Errorf("TLS handshake: %w: %w", err, delivery.ErrTransportUnusable)}
	}
	return ctxError(ctx, fmt.Errorf("TLS handshake: %w", err))
}

// tlsRefusal says for people why a handshake failed in a way no retry can
// fix, or "" for a failure that may pass next time (a lost connection).
func tlsRefusal(err error) string {
	var (
		alert tls.AlertError
		rhe   tls.RecordHeaderError
		ua    x509.UnknownAuthorityError
		he    x509.HostnameError
		ci    x509.CertificateInvalidError
		cve   *tls.CertificateVerificationError
		oe    *net.OpError
	)
	switch {
	case errors.As(err, &ua):
		return "relay's TLS certificate is not signed by a trusted authority"
	case errors.As(err, &he):
		return "relay's TLS certificate is not valid for " + replytext.Line(he.Host)
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		return "relay's TLS certificate has expired or is not valid yet"
	case errors.As(err, &ci), errors.As(err, &cve):
		return "relay's TLS certificate does not verify"
	case errors.As(err, &alert), errors.As(err, &oe) && oe.Op == "remote error":
		// crypto/tls reports an alert from the server as a net.OpError
		// of Op "remote error" (AlertError is QUIC's).
		return "relay refused the TLS handshake"
	case errors.As(err, &rhe):
		return "relay does not speak TLS"
	}
	return ""
}

// looksLikeReply reports whether b, the first bytes of what should be a
// TLS record, is the start of an SMTP reply line: three digits, then a
// space, a hyphen or the line's end.
func looksLikeReply(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	for _, d := range b[:3] {
		if d < '0' || d > '9' {
			return false
		}
	}
	return b[3] == ' ' || b[3] == '-' || b[3] == '\r'
}

// replyKind is the kind of a refusal by reply code alone: permanent for
// 5xx, temporary otherwise. Callers that know better (a refused session
// setup, too many recipients) state their own kind.
func replyKind(code int) delivery.DeliveryKind {
	if code/100 == 5 {
		return delivery.DeliveryPermanent
	}
	return delivery.DeliveryTemporary
}

// replyError is the DeliveryError of kind for an SMTP reply. The enhanced
// status code is split off the text when the server advertised
// ENHANCEDSTATUSCODES (RFC 2034) and it matches the reply's class.
func replyError(kind delivery.DeliveryKind, code int, msg string, enhanced bool) *delivery.DeliveryError {
	de := &delivery.DeliveryError{Kind: kind, Code: code}
	text := msg
	if enhanced {
		if e, rest, ok := strings.Cut(text, " "); ok && isEnhanced(e, code) {
			de.Enhanced, text = e, rest
		} else if isEnhanced(text, code) {
			de.Enhanced, text = text, ""
		}
	}
	de.Text = replytext.Line(text)
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

// dataRefused is how a transaction ends when the server answers DATA
// with anything but 354.
func dataRefused(code int, msg string, enhanced bool) txEnd {
	if code/100 != 4 && code/100 != 5 {
		return txEnd{err: replyError(delivery.DeliveryTemporary, code, msg, enhanced)}
	}
	return txEnd{keep: code != 421, err: replyError(replyKind(code), code, msg, enhanced)}
}

func firstErr(a, b *delivery.DeliveryError) *delivery.DeliveryError {
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
	var de *delivery.DeliveryError
	if errors.As(err, &de) && de.Code == 0 {
		return &delivery.DeliveryError{Kind: de.Kind, Err: fmt.Errorf("%w (%v)", ctx.Err(), de.Err)}
	}
	return err
}
