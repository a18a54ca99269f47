package smtptest

// When selects the commands a scripted Fault answers.
type When struct {
	// Stage is the stage the command is at.
	Stage Stage
	// Addr is the command's address (Command.Addr); "" matches any.
	Addr string
	// FirstAttempt limits the fault to Attempt 1, so that the retry of the
	// same Stage and Addr is answered normally.
	FirstAttempt bool
}

// matches reports whether c is one of the commands w selects.
func (w When) matches(c Command) bool {
	return c.Stage == w.Stage && (w.Addr == "" || c.Addr == w.Addr) && (!w.FirstAttempt || c.Attempt == 1)
}

// At is a script for Options.Faults that answers the commands w selects
// with f, and every other command normally.
func At(w When, f Fault) func(Command) Fault {
	return func(c Command) Fault {
		if w.matches(c) {
			return f
		}
		return Fault{}
	}
}

// Each combines scripts for Options.Faults: a command gets the first
// non-zero Fault of scripts, in order, or is answered normally.
func Each(scripts ...func(Command) Fault) func(Command) Fault {
	return func(c Command) Fault {
		for _, s := range scripts {
			if f := s(c); f != (Fault{}) {
				return f
			}
		}
		return Fault{}
	}
}
