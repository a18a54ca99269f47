package bounce

// Verdicts that a reporting system states itself, beside the remote
// server's words: PowerMTA's bounce category, and the replies that a
// provider documents as a missing mailbox.

import "strings"

// powerMTACategory returns the class of a PowerMTA
// X-PowerMTA-BounceCategory value, the category PowerMTA itself gives the
// remote server's reply: "bad-mailbox" (user-unknown), "bad-domain"
// (domain-unknown) and "inactive-mailbox" (mailbox-disabled). The others
// ("quota-issues", "spam-related", "policy-related", "no-answer-from-host",
// ...) return "": the reply's own words decide those.
func powerMTACategory(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "bad-mailbox":
		return ClassUserUnknown
	case "bad-domain":
		return ClassDomainUnknown
	case "inactive-mailbox":
		return ClassMailboxDisabled
	}
	return ""
}

// providerVerdict is a reporting system, known by its report's fixed
// words (markers, in the lower-cased human-readable text or
// Reporting-MTA), and the words of its replies that it uses only of a
// missing mailbox.
type providerVerdict struct {
	markers []string
	class   string
	phrases []string
}

// providerVerdicts are the providers whose own reports tell a missing
// mailbox in words that, from another system, could be a filter's.
var providerVerdicts = []providerVerdict{
	// Symantec Email Security.cloud (MessageLabs: "This is the mail
	// delivery agent at Symantec Email Security.cloud." / "... at
	// messagelabs.com.") checks each recipient against the addresses its
	// customer registered, and refuses an unregistered one with "550
	// <address>... No such user" or "542 <address> Rejected".
	{[]string{"symantec email security.cloud", "mail delivery agent at messagelabs", ".messagelabs."}, ClassUserUnknown, []string{"no such user", "542 "}},
}

// providerClass returns the class that a report (lowerText, its
// lower-cased human-readable text, and its Reporting-MTA) gives a
// recipient whose diagnostic is diag, or "".
func providerClass(lowerText, reportingMTA, diag string) string {
	lower := lowerASCII(diag)
	for _, p := range providerVerdicts {
		if containsAny(lower, p.phrases) && (containsAny(lowerText, p.markers) || containsAny(lowerASCII(reportingMTA), p.markers)) {
			return p.class
		}
	}
	return ""
}

// filteredUnknown are replies that say "user unknown" of no address:
// KDDI's au (ezweb.ne.jp, au.com) answers so when the recipient's own
// filter refuses the sender, after DATA, for addresses that exist
// ("550 : User unknown", relayed by Yahoo as "550: : User unknown").
var filteredUnknown = []string{"550 : user unknown", ": : user unknown"}

// fullWords are a report's words for a full mailbox or disk: around a
// reply that says the user is unknown, they make it soft.
var fullWords = []string{"not enough disk space", "insufficient disk space", "mailbox is full", "mailbox full", "over quota", "quota exceeded"}

// retriesOver are an MTA's words for giving up after temporary failures
// (Exim's "retry timeout exceeded", "all hosts have been failing for a
// long time"; qmail-remote's temporary DNS and connection failures,
// which qmail-send returns only when the message's queue lifetime is
// over): with no code shown, the status is a 4.x.x one.
var retriesOver = []string{"retry timeout exceeded", "have been failing for a long time",
	"couldn't find any host by that name", "wasn't able to establish an smtp connection"}
