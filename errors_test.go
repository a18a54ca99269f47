package postroom_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/postroom/postroom"
)

func TestValidationErrors(t *testing.T) {
	a := &postroom.ValidationError{Field: "message.subject", Reason: "x"}
	b := &postroom.ValidationError{Field: "message.bcc", Reason: "y"}
	c := &postroom.ValidationError{Field: "message.images[0].cid", Reason: "z"}
	tests := []struct {
		name string
		err  error
		want []*postroom.ValidationError
	}{
		{"nil", nil, nil},
		{"one", a, []*postroom.ValidationError{a}},
		{"joined", errors.Join(a, b), []*postroom.ValidationError{a, b}},
		{"nested joins in order", errors.Join(a, errors.Join(b, c)), []*postroom.ValidationError{a, b, c}},
		{"another error among them", errors.Join(a, errors.New("disk")), nil},
		{"wrapped", fmt.Errorf("ctx: %w", a), []*postroom.ValidationError{a}},
		{"wrapped join", fmt.Errorf("ctx: %w", errors.Join(a, fmt.Errorf("inner: %w", b))), []*postroom.ValidationError{a, b}},
		{"join wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", errors.Join(a, b))), []*postroom.ValidationError{a, b}},
		{"wrapped among other errors", fmt.Errorf("ctx: %w", errors.Join(a, errors.New("disk"))), nil},
		{"wrapped with a sentinel", fmt.Errorf("%w: %w", postroom.ErrInvalidJSON, a), nil},
		{"wrapped sentinel only", fmt.Errorf("ctx: %w", postroom.ErrNoRecipients), nil},
		{"sentinel", postroom.ErrNoRecipients, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := postroom.ValidationErrors(tt.err)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("[%d] = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestDeliveryErrorUnwrap(t *testing.T) {
	cause := errors.New("connection reset")
	err := fmt.Errorf("send: %w", &postroom.DeliveryError{Code: 421, Err: cause})
	var de *postroom.DeliveryError
	if !errors.As(err, &de) || de.Code != 421 || !errors.Is(err, cause) {
		t.Fatalf("errors.As/Is through a DeliveryError failed: %v", err)
	}
	pe := &postroom.PartialError{Refused: []postroom.RefusedRecipient{{Address: "a@example.com", Err: cause}}}
	if !errors.Is(pe, cause) {
		t.Fatalf("a PartialError does not unwrap to its refusals' errors")
	}
}
