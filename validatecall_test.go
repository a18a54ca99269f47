package postroom_test

import (
	"errors"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// TestValidate checks Validate against Run on the same calls: the same
// call-level error, the same invalid recipients, and nothing sent.
func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		call *postroom.Call
	}{
		{"valid", smallCall("a@example.org", "b@example.org")},
		{"bad and duplicate recipients", smallCall("a@example.org", "not an address", "A@example.org")},
		{"no recipients", smallCall()},
		{"bad from", func() *postroom.Call {
			c := smallCall("a@example.org")
			c.Message.FromEmail = "nope"
			return c
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := transport.NewMemory()
			m := newMailer(t, mem, postroom.Options{})
			got, err := m.Validate(t.Context(), postroom.OpSend, tt.call)
			if mem.Len() != 0 {
				t.Fatalf("Validate sent %d messages", mem.Len())
			}
			want, wantErr := m.Run(t.Context(), postroom.OpSend, tt.call, postroom.RunOptions{})
			var ve, wve *postroom.ValidationError
			if (err == nil) != (wantErr == nil) || errors.Is(err, postroom.ErrNoRecipients) != errors.Is(wantErr, postroom.ErrNoRecipients) ||
				errors.As(err, &ve) != errors.As(wantErr, &wve) {
				t.Fatalf("Validate: %v, Run: %v", err, wantErr)
			}
			if err != nil {
				return
			}
			for i, r := range got {
				switch {
				case r.Status == "" && want[i].Status == postroom.StatusInvalid:
					t.Errorf("recipient %d: Validate passed it, Run: %+v", i, want[i])
				case r.Status != "" && (r.Status != want[i].Status || r.Reason != want[i].Reason):
					t.Errorf("recipient %d: Validate %+v, Run %+v", i, r, want[i])
				}
			}
		})
	}
	if _, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Validate(t.Context(), postroom.Operation(7), smallCall("a@example.org")); err == nil {
		t.Error("Validate accepted an unknown operation")
	}
}
