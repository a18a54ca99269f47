package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/postroom/postroom/delivery"
)

func TestDeliveryErrorText(t *testing.T) {
	cause := errors.New("connection reset")
	tests := []struct {
		name string
		err  *delivery.DeliveryError
		want string
	}{
		{"zero", &delivery.DeliveryError{}, "postroom: delivery failed (temporary)"},
		{"reply", &delivery.DeliveryError{Kind: delivery.DeliveryPermanent, Code: 550, Enhanced: "5.1.1", Text: "no such\r\nuser"}, "postroom: delivery failed (permanent): 550 5.1.1 no such user"},
		{"cause without reply", &delivery.DeliveryError{Kind: delivery.DeliveryUncertain, Err: cause}, "postroom: delivery failed (uncertain): connection reset"},
		{"reply over cause", &delivery.DeliveryError{Code: 421, Err: cause}, "postroom: delivery failed (temporary): 421"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDeliveryKindString(t *testing.T) {
	for k, want := range map[delivery.DeliveryKind]string{
		delivery.DeliveryTemporary: "temporary",
		delivery.DeliveryPermanent: "permanent",
		delivery.DeliveryUncertain: "uncertain",
		delivery.DeliveryKind(9):   "temporary",
	} {
		if got := k.String(); got != want {
			t.Errorf("DeliveryKind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestUnwrap(t *testing.T) {
	cause := errors.New("connection reset")
	err := fmt.Errorf("send: %w", &delivery.DeliveryError{Code: 421, Err: cause})
	var de *delivery.DeliveryError
	if !errors.As(err, &de) || de.Code != 421 || !errors.Is(err, cause) {
		t.Fatalf("errors.As/Is through a DeliveryError failed: %v", err)
	}
	pe := &delivery.PartialError{Refused: []delivery.RefusedRecipient{{Address: "a@example.com", Err: cause}, {Address: "b@example.com"}}}
	if !errors.Is(pe, cause) {
		t.Fatal("a PartialError does not unwrap to its refusals' errors")
	}
	if got := len(pe.Unwrap()); got != 1 {
		t.Errorf("PartialError.Unwrap() has %d errors, want 1 (a refusal without error adds none)", got)
	}
	if got, want := pe.Error(), "postroom: refused for a@example.com (connection reset), b@example.com"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func ExampleTransportFunc() {
	var tr delivery.Transport = delivery.TransportFunc(func(ctx context.Context, env *delivery.Envelope) error {
		if env.To[0] == "nobody@example.com" {
			return &delivery.DeliveryError{Kind: delivery.DeliveryPermanent, Code: 550, Enhanced: "5.1.1", Text: "no such user"}
		}
		return nil
	})
	for _, to := range []string{"ann@example.com", "nobody@example.com"} {
		err := tr.Send(context.Background(), &delivery.Envelope{From: "shop@example.com", To: []string{to}})
		var de *delivery.DeliveryError
		if errors.As(err, &de) {
			fmt.Println(to, de.Kind, de.Code)
			continue
		}
		fmt.Println(to, err)
	}
	// Output:
	// ann@example.com <nil>
	// nobody@example.com permanent 550
}
