package smtptest

import "testing"

func TestAt(t *testing.T) {
	f := Fault{Code: 451}
	tests := []struct {
		name string
		when When
		cmd  Command
		want Fault
	}{
		{"stage, any address", When{Stage: Rcpt}, Command{Stage: Rcpt, Addr: "a@example.org", Attempt: 3}, f},
		{"other stage", When{Stage: Rcpt}, Command{Stage: Mail, Attempt: 1}, Fault{}},
		{"address", When{Stage: Rcpt, Addr: "a@example.org"}, Command{Stage: Rcpt, Addr: "a@example.org", Attempt: 2}, f},
		{"other address", When{Stage: Rcpt, Addr: "a@example.org"}, Command{Stage: Rcpt, Addr: "b@example.org", Attempt: 1}, Fault{}},
		{"first attempt", When{Stage: Rcpt, FirstAttempt: true}, Command{Stage: Rcpt, Attempt: 1}, f},
		{"retry", When{Stage: Rcpt, FirstAttempt: true}, Command{Stage: Rcpt, Attempt: 2}, Fault{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := At(tt.when, f)(tt.cmd); got != tt.want {
				t.Errorf("At(%+v)(%+v) = %+v, want %+v", tt.when, tt.cmd, got, tt.want)
			}
		})
	}
}

func TestEach(t *testing.T) {
	script := Each(
		At(When{Stage: Rcpt, Addr: "a@example.org"}, Fault{Code: 550}),
		At(When{Stage: Rcpt}, Fault{Code: 451}),
		At(When{Stage: Rcpt}, Fault{Code: 452}), // shadowed by the one before
	)
	tests := []struct {
		cmd  Command
		want Fault
	}{
		{Command{Stage: Rcpt, Addr: "a@example.org", Attempt: 1}, Fault{Code: 550}},
		{Command{Stage: Rcpt, Addr: "b@example.org", Attempt: 1}, Fault{Code: 451}},
		{Command{Stage: Mail, Addr: "a@example.org", Attempt: 1}, Fault{}},
	}
	for _, tt := range tests {
		if got := script(tt.cmd); got != tt.want {
			t.Errorf("script(%+v) = %+v, want %+v", tt.cmd, got, tt.want)
		}
	}
	if got := Each()(Command{Stage: Rcpt, Attempt: 1}); got != (Fault{}) {
		t.Errorf("Each() = %+v, want the zero Fault", got)
	}
}
