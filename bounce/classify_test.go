package bounce

import "testing"

// TestClassify: the class and verdict of a failed recipient from its
// status and the remote server's reply, as servers write them.
func TestClassify(t *testing.T) {
	cases := []struct {
		status, diag string
		class        string
		hard         bool
	}{
		{"5.1.1", "550 5.1.1 <a@example.net>: Recipient address rejected: User unknown in virtual mailbox table", ClassUserUnknown, true},
		{"5.0.0", "550 5.1.1 The email account that you tried to reach does not exist.", ClassUserUnknown, true},
		{"5.0.0", "550 No such user here (in reply to RCPT TO command)", ClassUserUnknown, true},
		{"5.0.0", "550 User unknown (in reply to end of DATA command)", ClassUserUnknown, false},
		{"5.1.1", "550 5.1.1 Service unavailable; client host [192.0.2.1] blocked using zen.spamhaus.org", ClassSpamBlocked, false},
		{"5.7.1", "550 5.7.1 Our system has detected that this message is likely unsolicited mail", ClassSpamBlocked, false},
		{"5.7.26", "550 5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy", ClassPolicy, false},
		{"5.2.2", "552 5.2.2 Mailbox full", ClassMailboxFull, false},
		{"4.2.2", "452 4.2.2 The email account that you tried to reach is over quota", ClassMailboxFull, false},
		{"5.2.1", "550 5.2.1 The email account that you tried to reach is disabled", ClassMailboxDisabled, true},
		{"5.3.4", "552 5.3.4 Message size exceeds fixed maximum message size", ClassTooLarge, false},
		{"5.7.1", "554 5.7.1 <a@example.net>: Relay access denied", ClassPolicy, false},
		{"4.7.1", "450 4.7.1 Greylisted, please try again later", ClassTemporary, false},
		{"4.1.1", "450 4.1.1 <a@example.net>: Recipient address rejected: User unknown", ClassUserUnknown, false},
		{"5.1.2", "Host or domain name not found. Name service error for name=example.invalid type=MX: Host not found", ClassDomainUnknown, true},
		{"4.4.3", "Host or domain name not found. Name service error for name=example.net type=A: Host not found, try again", ClassExpired, false}, // failed with 4.x.x: the server gave up
		{"5.6.0", "550 5.6.0 Message rejected: virus found in attachment", ClassContent, false},
		{"5.4.7", "retry timeout exceeded", ClassExpired, false},
		{"5.0.0", "554 delivery error: dd This user doesn't have a example.com account (a@example.com) [0]", ClassUserUnknown, true},
		{"5.0.0", "550 5.0.0 Unroutable sender address (after MAIL FROM:<s@example.com>)", ClassPolicy, false},
		{"5.5.0", "550 Requested action not taken: mailbox unavailable", ClassUserUnknown, false},
		{"", "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)", ClassPolicy, false},
		{"", "Sorry, I couldn't find any host named example.invalid. (#5.1.2)", ClassDomainUnknown, true},
		{"5.0.0", "550 5.1.1 Recipient address rejected: Access denied. Your IP 192.0.2.1 is listed at bl.example.net", ClassSpamBlocked, false},
		{"5.4.1", "550 5.4.1 Recipient address rejected: Access denied. AS(201806281)", ClassUserUnknown, true},
		{"5.5.0", "550 5.5.0 Adresse destinataire invalide. Invalid recipient. LPN007_416", ClassUserUnknown, true},
		{"5.2.1", "550 5.2.1 <a@example.net>... User Unknown [RCPT_TO]", ClassUserUnknown, true},
		{"5.2.1", "550 5.2.1 <a@example.net>... User Unknown", ClassUserUnknown, false},
		{"5.0.0", "550 : User unknown", ClassUserUnknown, false},
		{"5.0.0", "The email account that you tried to reach does not exist. 550 : User unknown", ClassUserUnknown, false},
		{"5.3.2", "521 5.3.2 <a@example.net>: Recipient address rejected: System not accepting network messages", ClassDomainUnknown, true},
		{"5.0.0", "DNS lookup failure: host mx.example.invalid not found", ClassDomainUnknown, true},
		{"5.0.0", "550 <a@example.net>: Recipient address rejected. (in reply to RCPT TO command)", ClassUserUnknown, true},
		{"5.0.0", "550 <a@example.net>: Recipient address rejected.", ClassUserUnknown, false},
		{"5.7.1", "554 5.7.1 <a@example.net>: Recipient address rejected: Greylisted for 5 minutes", ClassTemporary, false},
	}
	for _, c := range cases {
		t.Run(c.diag, func(t *testing.T) {
			r := finish(cand{final: "a@example.net", status: c.status}, ActionFailed, c.diag, "", "")
			if r.Class != c.class || r.Hard != c.hard {
				t.Errorf("class %q hard %v, want %q %v", r.Class, r.Hard, c.class, c.hard)
			}
		})
	}
}

// TestReportersVerdict: the reporting MTA's own category (PowerMTA's
// X-PowerMTA-BounceCategory, MessageLabs' address registration) makes an
// unknown user sure; it never overrides a reply that names a block.
func TestReportersVerdict(t *testing.T) {
	r := finish(cand{final: "a@example.net", status: "5.2.1", verdict: powerMTACategory("bad-mailbox")}, ActionFailed, "550 5.2.1 <a@example.net>... User Unknown", "", "")
	if r.Class != ClassUserUnknown || !r.Hard {
		t.Errorf("bad-mailbox: class %q hard %v, want user-unknown hard", r.Class, r.Hard)
	}
	r = finish(cand{final: "a@example.net", status: "5.7.1", verdict: powerMTACategory("bad-mailbox")}, ActionFailed, "550 5.7.1 Message rejected as spam", "", "")
	if r.Class != ClassSpamBlocked || r.Hard {
		t.Errorf("bad-mailbox over a spam block: class %q hard %v, want spam-blocked soft", r.Class, r.Hard)
	}
	if got := providerClass("this is the mail delivery agent at symantec email security.cloud.", "", "542 a@example.net Rejected"); got != ClassUserUnknown {
		t.Errorf("messagelabs 542: %q", got)
	}
	if got := providerClass("", "server-9.bemta-4.messagelabs.example.com", "550 a@example.net... No such user"); got != ClassUserUnknown {
		t.Errorf("messagelabs by its Reporting-MTA: %q", got)
	}
	if got := providerClass("this is the mail delivery agent at mx.example.com.", "mx.example.com", "542 a@example.net Rejected"); got != "" {
		t.Errorf("542 from another system: %q", got)
	}
	// The report's own words say the disk is full: not a dead address.
	r = finish(cand{final: "a@example.net", status: "5.1.1"}, ActionFailed, "550 5.1.1 <a@example.net>... User Unknown", "Your message was automatically rejected: Not enough disk space", "")
	if r.Hard || r.Class != ClassMailboxFull {
		t.Errorf("disk full around user unknown: class %q hard %v", r.Class, r.Hard)
	}
}

// TestGaveUpStatus: with no code shown, a failure after retries ("retry
// timeout exceeded") has a 4.x.x status: the remote never refused for good.
func TestGaveUpStatus(t *testing.T) {
	r := finish(cand{final: "a@example.net"}, ActionFailed, "retry timeout exceeded", "", "")
	if r.Status != "4.4.7" || r.Class != ClassExpired || r.Hard {
		t.Errorf("status %q class %q hard %v, want 4.4.7 expired soft", r.Status, r.Class, r.Hard)
	}
	r = finish(cand{final: "a@example.net"}, ActionFailed, "550 5.1.1 user unknown: retry timeout exceeded", "", "")
	if r.Status != "5.1.1" {
		t.Errorf("status %q, want the code shown, 5.1.1", r.Status)
	}
}

// TestNeverHard: a delayed recipient, and a failed one with a 4.x.x
// status, are never hard, whatever the text.
func TestNeverHard(t *testing.T) {
	r := finish(cand{final: "a@example.net", status: "5.1.1"}, ActionDelayed, "550 5.1.1 user unknown", "", "")
	if r.Hard {
		t.Error("a delayed recipient is hard")
	}
	r = finish(cand{final: "a@example.net", status: "4.1.1"}, ActionFailed, "user unknown", "", "")
	if r.Hard {
		t.Error("a 4.x.x failure is hard")
	}
}

func TestFindStatus(t *testing.T) {
	for s, w := range map[string]string{
		"550 5.1.1 <a@b>":            "5.1.1",
		"Sorry (#5.1.1)":             "5.1.1",
		"host 192.168.5.1.1 said":    "",
		"550-5.7.26 text":            "5.7.26",
		"5.1.351 Remote server":      "5.1.351",
		"version 1.5.2.3 of it":      "",
		"4.4.7 delivery time":        "4.4.7",
		"code 5.9.1 is not a status": "",
	} {
		if got := findStatus(s); got != w {
			t.Errorf("findStatus(%q) = %q, want %q", s, got, w)
		}
	}
}

func TestFindReplyCode(t *testing.T) {
	for s, w := range map[string]string{
		" 550 5.1.1 user unknown":                    "550",
		"Error, ERROR_CODE :421, ERROR_CODE :, Host": "421",
		"421, at the start":                          "",
		"the limit is 500, please":                   "",
		"host said: 450-4.2.1 try later":             "450",
		"id 550abc":                                  "",
	} {
		if got := findReplyCode(s); got != w {
			t.Errorf("findReplyCode(%q) = %q, want %q", s, got, w)
		}
	}
}

func TestCleanAddress(t *testing.T) {
	for s, w := range map[string]string{
		"rfc822; User@Example.COM":           "User@example.com",
		"rfc822;<a+2Bb@example.com>":         "a+b@example.com",
		"rfc822; bounces+ab12@example.com":   "bounces+ab12@example.com",
		"utf-8; \\x{540D}@example.jp":        "名@example.jp",
		"rfc822; IMCEAEX-_O=EX_OU=FIRST@x.y": "IMCEAEX-_O=EX_OU=FIRST@x.y",
		"rfc822; not an address":             "",
		"  <a@example.com> (A Person)":       "a@example.com",
	} {
		if got := cleanAddress(s); got != w {
			t.Errorf("cleanAddress(%q) = %q, want %q", s, got, w)
		}
	}
}

func TestSendIDFrom(t *testing.T) {
	for s, w := range map[string]string{
		"bounces+0123456789ABCDEF0123456789abcdef@bounce.example.com":   "0123456789abcdef0123456789abcdef",
		"<bounces+0123456789abcdef0123456789abcdef@bounce.example.com>": "0123456789abcdef0123456789abcdef",
		"bounces+0123456789abcdef0123456789abcde@bounce.example.com":    "",
		"bounces-0123456789abcdef0123456789abcdef@bounce.example.com":   "",
		"bounces+0123456789abcdef0123456789abcdeg@bounce.example.com":   "",
	} {
		if got := SendIDFrom(s); got != w {
			t.Errorf("SendIDFrom(%q) = %q, want %q", s, got, w)
		}
	}
}
