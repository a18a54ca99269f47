package bounce

// The verdict on one recipient: its action, status, class and Hard.

import "strings"

// finish makes a Recipient of a candidate: its action (from the status
// when the report gave none), status, class and verdict. extra is more
// text about the recipient, for the class when diag says nothing
// specific. context, when not empty, is the text around the recipient in
// a non-standard bounce: a block it speaks of makes the recipient soft.
func finish(c cand, action, diag, extra, context string) Recipient {
	diag = oneLine(diag)
	status := c.status
	find, findCode := findFailStatus, findFailReplyCode
	if action != "" && action != ActionFailed && action != ActionDelayed {
		find, findCode = findStatus, findReplyCode
	}
	if ds := find(diag); ds != "" && (status == "" || strings.HasSuffix(status, ".0.0") && ds[0] == status[0]) {
		status = ds
	}
	code := findCode(" " + diag)
	if status == "" && code == "" && extra != "" {
		// The reply is elsewhere in the text about this recipient
		// ("Could not be delivered because of 550 5.1.1 User unknown"
		// above the address).
		status = find(extra)
	}
	if action == "" {
		switch {
		case status != "":
			action = actionOf(status[0])
		case code != "":
			action = actionOf(code[0])
		default:
			action = ActionFailed
		}
	}
	class := ClassDelivered
	explicit := status != ""
	lowerExtra := lowerASCII(extra)
	lowerDiag := strings.ToLower(diag)
	sure := false
	switch action {
	case ActionFailed, ActionDelayed:
		class = classify(action, status, lowerDiag, lowerExtra)
		if c.verdict != "" && action == ActionFailed {
			// The reporting MTA's own category wins unless the reply
			// names a block, a policy, a full mailbox, ...
			if spec := matchRules(specificRules, lowerDiag); spec == "" || isHardClass(spec) {
				class, sure = c.verdict, true
			}
		}
		if status == "" {
			d := byte('5')
			switch {
			case code != "":
				d = code[0]
			case action == ActionDelayed, containsAny(lowerDiag, retriesOver):
				// A delay, or temporary failures until the MTA gave
				// up: the remote never refused for good.
				d = '4'
			}
			if d == '2' {
				d = '5'
			}
			status = classStatus(d, class)
		}
	}
	r := Recipient{
		Address:    c.address(),
		Action:     action,
		Status:     status,
		Class:      class,
		Diagnostic: diag,
		RemoteMTA:  c.remote,
	}
	cmd := ""
	if isHardClass(r.Class) {
		cmd = smtpCommand(diag, lowerDiag)
		if cmd == "" {
			cmd = smtpCommand(extra, lowerExtra)
		}
	}
	if cmd == "MAIL" && isHardClass(r.Class) {
		// Refused at MAIL FROM: the sender is the subject, not the
		// recipient ("Unroutable sender address").
		r.Class = ClassPolicy
	}
	if action == ActionFailed && status[0] == '4' && (r.Class == ClassNetwork || r.Class == ClassOther) {
		// A temporary failure reported as final: the server gave up.
		r.Class = ClassExpired
	}
	r.Hard = action == ActionFailed && strings.HasPrefix(status, "5.") && isHardClass(r.Class)
	if r.Hard && r.Class == ClassUserUnknown {
		// An unknown user is sure when the status says so (X.1.1, X.1.0),
		// when the server answered RCPT TO, or in the words of a system
		// that says so only of missing mailboxes. After DATA, or with a
		// generic code and no command shown, it may be a filter's
		// refusal of an address that exists.
		sub := status[1:]
		byStatus := explicit && (strings.HasPrefix(sub, ".1.1") || strings.HasPrefix(sub, ".1.0") ||
			strings.HasPrefix(sub, ".1.6"))
		byWords := containsAny(lowerDiag, sureUnknown) || containsAny(lowerExtra, sureUnknown)
		r.Hard = sure || (byStatus || byWords || cmd == "RCPT") && !containsAny(lowerDiag, filteredUnknown)
	}
	if r.Hard && !sure && containsAny(lowerExtra, fullWords) {
		// The report's own words say the mailbox or disk is full,
		// whatever the remote reply: not a dead address.
		r.Hard, r.Class = false, ClassMailboxFull
	}
	if r.Hard && context != "" && containsAny(strings.ToLower(context), contextBlocks) {
		r.Hard = false
	}
	return r
}

// actionOf is the action an enhanced status or reply code class implies.
func actionOf(c byte) string {
	switch c {
	case '2':
		return ActionDelivered
	case '4':
		return ActionDelayed
	}
	return ActionFailed
}

// smtpCommand returns the SMTP command that s (a reply with its context:
// "in reply to RCPT TO command", "after RCPT TO:", ">>> DATA", "after
// end of data") shows the reply answered: "DATA" when the data stage is
// named (the last command of a transcript), else "RCPT", "MAIL" or
// "CONN", else "". lower is s in lower case.
func smtpCommand(s, lower string) string {
	switch {
	case containsWord(s, "DATA") || strings.Contains(lower, "end of data") || strings.Contains(lower, "after data"):
		return "DATA"
	case containsWord(s, "RCPT") || strings.Contains(lower, "rcpt to") || strings.Contains(lower, "does not like recipient") ||
		strings.Contains(lower, "[rcpt_to]"): // Yahoo names the command after the reply
		return "RCPT"
	case strings.Contains(lower, "mail from:") || strings.Contains(lower, "mail from command"):
		return "MAIL"
	case containsWord(s, "HELO") || containsWord(s, "EHLO") || containsWord(s, "STARTTLS"):
		return "CONN"
	}
	return ""
}

// containsWord reports whether s contains w not inside a longer word.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isWordChar(s[j-1])) && (end == len(s) || !isWordChar(s[end])) {
			return true
		}
		i = end
	}
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
