package bounce

import "strings"

// rule is a class and the lower-case phrases that show it.
type rule struct {
	class   string
	phrases []string
}

// specificRules decide the class from the diagnostic text, first match
// wins, and win over the status code: many servers send a generic 5.0.0
// or 5.5.0 for an unknown user, and some send 5.1.1 for a block. Blocks,
// policy, content and size come before the hard classes, so that a text
// that speaks of both is never called hard.
var specificRules = []rule{
	// The reporting system's own failures: nothing about the address.
	{ClassOther, []string{
		"pipe to |", "mailer error", "procmail:", "couldn't create", "internal system error",
		"local configuration error", "mail loop", "loop detected", "too many hops",
	}},
	{ClassOnHold, []string{"on hold"}},
	// Refusals by the recipient's own filters: the address exists.
	{ClassPolicy, []string{
		"refused due to recipient preferences", "user reject", "user refuses to receive",
		"you have been blocked by the recipient", "message rejected due to user rules",
		"is not accepting any mail", "only accepting mail from specific", "bounced address",
		"resolver.rst.notauthorized", "this account is protected by", "has restricted sms e-mail",
		"refuse to receive mail", "sender rejected", "sender address rejected",
		"the group you tried to contact", "not a member of this mailing list", "duplicated message-id",
	}},
	{ClassTemporary, []string{"greylist", "graylist", "grey-list", "gray-list", "greylisted"}},
	{ClassMailboxDisabled, []string{"recipient account is blocked", "account has been blocked", "account is blocked", "due to inactivity", "inactive account", "account is inactive", "is inactive", "has been inactive"}},
	{ClassPolicy, []string{
		"dmarc", "spf", "dkim", "sender policy framework", "unauthenticated",
		"authentication", "not authenticated", "sender address rejected",
		"sender verify", "sender verification", "sender rejected", "sender denied",
		"sender domain", "domain of sender", "relay access denied", "relaying denied",
		"relay not permitted", "relaying not allowed", "not permitted to relay",
		"unable to relay", "not allowed to relay", "relay denied", "we do not relay",
		"no relaying", "relay prohibited", "allowed rcpthosts", "rate limit", "ratelimit", "rate-limit", "at a rate", "my name was rejected", "too many connections",
		"too many messages", "too many recipients", "sending limit", "reverse dns",
		"ptr record", "rdns", "reverse lookup", "tls required", "must issue a starttls",
		"encryption required", "requires encryption", "not authorized to send",
		"restricted to", "not accepting mail from", "unauthorized sender",
	}},
	{ClassSpamBlocked, []string{
		"spamhaus", "spamcop", "barracuda", "sorbs", "dnsbl", "rbl", "blacklist",
		"black list", "blocklist", "block list", "denylist", "deny list",
		"is listed", "listed on", "listed at", "listed by", "currently listed",
		"reputation", "spam", "junk mail", "unsolicited", "bulk mail", "phish",
		"blocked", "banned", "client host rejected", "refused to accept your",
		"your ip", "your host", "mail from your", "suspicious", "abuse",
		"not accepted due to", "complaints", "poor quality", "tss04", "tsss",
	}},
	// Office 365's directory-based edge blocking: the recipient is not
	// in the directory. After the blocks (a listed IP is told the same
	// way), before the policy rule that "access denied" hits.
	{ClassUserUnknown, []string{"recipient address rejected: access denied", "recipnotfound", "resolver.adr.recipnotfound"}},
	{ClassPolicy, []string{"access denied"}},
	{ClassContent, []string{
		"virus", "malware", "infected", "trojan", "attachment", "content rejected",
		"message content", "content filter", "content policy", "prohibited content",
		"forbidden content", "executable", "file type", "filetype", "bad content",
	}},
	{ClassMailboxFull, []string{
		"quota", "mailbox full", "mailbox is full", "mailbox_full", "mailbox size limit",
		"full mailbox", "mailbox has exceeded", "mailbox exceeded", "exceeds mailbox",
		"insufficient storage", "storage limit", "storage space", "out of storage",
		"exceeded storage", "mail box full", "mailfolder is full", "mailbox is over",
		"user is over", "inbox is full", "box is full", "account is full", "out of space",
		"disk full", "not enough space", "mailbox would exceed", "enough disk space",
	}},
	{ClassTooLarge, []string{
		"message too large", "message is too large", "message too big", "message is too big",
		"message size", "size limit", "size exceeds", "exceeds size", "too big",
		"too large", "exceeds the maximum", "maximum message size", "message length exceeds",
		"mail size", "file too big", "message file too big", "exceeded the size",
	}},
	{ClassMailboxDisabled, []string{
		"disabled", "deactivated", "de-activated", "suspended", "no longer active",
		"no longer in use", "no longer available", "not active", "account expired",
		"expired account", "account has expired", "has been closed", "account closed",
		"is closed", "has moved", "user moved", "has been terminated", "terminated",
		"has been removed", "not in use", "inactive", "is frozen", "account is locked",
	}},
	// Temporary name service failures, before the unknown domains.
	{ClassNetwork, []string{
		"not found, try again", "name server reply", "servfail", "temporary failure in name resolution",
		"dns timeout", "lookup timed out", "timeout while",
		"remote protocol error", "connection reset",
		"couldn't find any host by that name",         // qmail-remote's temporary DNS failure "(#4.1.2)", given up
		"wasn't able to establish an smtp connection", // qmail-remote "(#4.4.1)"
	}},
	{ClassDomainUnknown, []string{
		"host unknown", "unknown host", "domain not found", "no such domain",
		"domain does not exist", "domain doesn't exist", "unrouteable", "unroutable",
		"nxdomain", "no mx", "mx record", "name service error", "no valid mx",
		"nonexistent domain", "non-existent domain", "invalid domain", "domain name not found",
		"domain unknown", "unknown domain", "bad destination system", "host not found",
		"host or domain name not found", "domain is not", "domain isn't", "no such host",
		"domain does not accept mail", "does not accept mail", "null mx", "hostname not found",
		"domain not exist", "unknown mail domain", "not a valid domain", "no smtp service", "find a mail exchanger", "find any host named",
		"illegal host/domain", "host/domain name",
		"dns lookup failure: host",       // dma: "DNS lookup failure: host example.net not found"
		"not accepting network messages", // "521 5.3.2 System not accepting network messages" (RFC 7504)
	}},
	{ClassUserUnknown, []string{
		"user unknown", "unknown user", "no such user", "no such mailbox", "no such recipient",
		"no such account", "no such person", "no such address", "no such local user",
		"does not exist", "doesn't exist", "not exist", "dosn't exist", "does not have",
		"doesn't have", "invalid recipient", "invalid mailbox", "invalid address",
		"invalid user", "invalid e-mail address", "invalid email address", "unknown recipient",
		"recipient unknown", "recipient not found", "user not found", "mailbox not found",
		"address not found", "account not found", "no mailbox", "mailbox unavailable",
		"mailbox not available", "mailbox is unavailable", "not a valid", "unknown address", "address unknown",
		"unknown local part", "unknown or illegal alias", "no account", "not our customer",
		"account does not exist", "bad destination mailbox", "not listed in", "mailbox does not",
		"unknown mailbox", "user invalid", "is not a known user", "not found in",
		"invalid final delivery user", "unknown email", "no longer", "unknown account",
		"no such", "user doesn't", "user does not", "not a known", "undeliverable address",
		"addressee unknown", "unknown addressee",
		"no valid recipients", "no recipients", "no mail box", "unknown alias",
		"not have an account", "illegal alias", "user is unknown", "invalid-recipient",
		"mailbox unknown", "unknown recipient", "recipient invalid", "unknown in",
		"address is not", "mailbox is not", "couldn't be found", "could not be found",
		"recipient name is not recognized", "not recognized", "recipientnotfound",
		"adresse destinataire invalide", "check if address is correct",
	}},
	{ClassExpired, []string{
		"retry timeout exceeded", "retry time not reached", "expired", "too long",
		"could not be delivered within", "delivery time", "timeout exceeded",
		"giving up", "in the queue", "queue lifetime", "maximum time", "has not been delivered",
		"failing for a long time", "retry timeout",
		"were not delivered", "was not delivered", "unable to deliver for",
	}},
	{ClassNetwork, []string{
		"connection refused", "connection timed out", "timed out", "timeout", "no route to host",
		"network is unreachable", "unreachable", "lost connection", "connection reset",
		"connection closed", "could not connect", "unable to connect", "couldn't connect",
		"failed to connect", "conversation with", "broken pipe", "servfail", "try again,",
		"temporary failure in name resolution", "dns lookup", "dns error", "connect to",
		"name resolution", "resolver", "tls handshake", "not reachable",
	}},
}

// bareRecipientRejected reports whether lower, a reply, ends with
// "Recipient address rejected." and no reason (but Postfix's "(in reply
// to RCPT TO command)").
func bareRecipientRejected(lower string) bool {
	const p = "recipient address rejected."
	i := strings.LastIndex(lower, p)
	if i < 0 {
		return false
	}
	rest := strings.TrimSpace(lower[i+len(p):])
	return rest == "" || strings.HasPrefix(rest, "(in reply to ") && strings.HasSuffix(rest, "command)")
}

// genericRules decide the class from the text only when the status code
// says nothing specific.
var genericRules = []rule{
	{ClassTemporary, []string{"try again", "try later", "temporar", "deferred", "please retry", "not yet", "retry later", "later"}},
	{ClassPolicy, []string{"policy", "rejected", "refused", "denied", "not allowed", "prohibit", "not permitted", "administrative", "forbidden", "unauthorized", "not authorized"}},
}

// isHardClass reports whether c is a class that may be Hard.
func isHardClass(c string) bool {
	return c == ClassUserUnknown || c == ClassDomainUnknown || c == ClassMailboxDisabled
}

// matchRules returns the class of the first rule one of whose phrases
// lower contains, or "".
func matchRules(rules []rule, lower string) string {
	for _, r := range rules {
		for _, p := range r.phrases {
			if strings.Contains(lower, p) {
				if (p == "not listed in" || !negatedListed(lower, p)) && (p != "virus" || !benignVirus(lower)) {
					return r.class
				}
			}
		}
	}
	return ""
}

// negatedListed reports whether phrase p, a spam-list phrase, appears in
// lower only as "not listed ..." (Domino's "not listed in the Name &
// Address Book" is an unknown user).
func negatedListed(lower, p string) bool {
	if !strings.HasPrefix(p, "listed") && p != "is listed" {
		return false
	}
	i := strings.Index(lower, p)
	return i >= 4 && strings.HasSuffix(lower[:i], "not ")
}

// benignVirus reports whether every "virus" in lower is a scanner's
// footer or name ("scanned by NOD32 antivirus", "No virus found in this
// message", "virus-free"), not a refusal of an infected message.
func benignVirus(lower string) bool {
	for i := 0; ; {
		j := strings.Index(lower[i:], "virus")
		if j < 0 {
			return true
		}
		j += i
		before, after := lower[max(0, j-12):j], lower[j+5:min(len(lower), j+12)]
		if !(strings.HasSuffix(before, "anti") || strings.HasSuffix(before, "anti-") ||
			strings.HasSuffix(before, "no ") || strings.HasSuffix(before, "scanned for ") ||
			strings.HasSuffix(before, "checked for ") || strings.HasPrefix(after, " free") ||
			strings.HasPrefix(after, "-free") || strings.HasPrefix(after, " scanned") ||
			strings.HasPrefix(after, " status: no")) {
			return false
		}
		i = j + 5
	}
}

// statusClass returns the class an enhanced status code implies (RFC
// 3463 and the IANA registry), or "" for a generic code.
func statusClass(status string) string {
	if len(status) < 5 {
		return ""
	}
	sub := status[2:]
	switch {
	case sub == "1.1", sub == "1.3", sub == "1.0" && status[0] == '5':
		if sub == "1.0" {
			return ""
		}
		return ClassUserUnknown
	case sub == "1.2", sub == "1.10":
		return ClassDomainUnknown
	case sub == "1.6", sub == "2.1":
		return ClassMailboxDisabled
	case sub == "1.7", sub == "1.8":
		return ClassPolicy
	case sub == "2.2", sub == "3.1" && status[0] == '5':
		return ClassMailboxFull
	case sub == "2.3", sub == "3.4":
		return ClassTooLarge
	case sub == "4.7":
		return ClassExpired
	case strings.HasPrefix(sub, "4."):
		return ClassNetwork
	case strings.HasPrefix(sub, "6."):
		return ClassContent
	case sub == "7.1" || sub == "7.0" || strings.HasPrefix(sub, "7."):
		return ClassPolicy
	case sub == "5.3":
		return ClassPolicy
	}
	return ""
}

// classify returns the class of a recipient from its diagnostic (lower,
// in lower case), else its status code, else lowerExtra (more of the
// report's text about it, in lower case), else the diagnostic's generic
// words, else its status's first digit.
func classify(action, status, lower, lowerExtra string) string {
	if c := matchRules(specificRules, lower); c != "" {
		return c
	}
	if bareRecipientRejected(lower) {
		// The bare refusal, with no reason after it, of the servers
		// that copy Postfix's wording for an unknown recipient
		// (Postfix itself always names the reason after a colon).
		return ClassUserUnknown
	}
	if c := statusClass(status); c != "" {
		return c
	}
	if lowerExtra != "" {
		if c := matchRules(specificRules, lowerExtra); c != "" {
			return c
		}
	}
	if c := matchRules(genericRules, lower); c != "" {
		return c
	}
	switch {
	case strings.HasPrefix(status, "4"), action == ActionDelayed:
		return ClassTemporary
	case strings.HasPrefix(status, "5"), action == ActionFailed:
		return ClassOther
	}
	return ClassOther
}

// classStatus is the status code a class implies, with first digit d,
// for a recipient whose message shows none.
func classStatus(d byte, class string) string {
	sub := ".0.0"
	switch class {
	case ClassUserUnknown:
		sub = ".1.1"
	case ClassDomainUnknown:
		sub = ".1.2"
	case ClassMailboxDisabled:
		sub = ".2.1"
	case ClassMailboxFull:
		sub = ".2.2"
	case ClassTooLarge:
		sub = ".3.4"
	case ClassSpamBlocked, ClassPolicy:
		sub = ".7.1"
	case ClassContent:
		sub = ".6.0"
	case ClassExpired:
		sub = ".4.7"
	case ClassNetwork:
		sub = ".4.1"
	}
	return string(d) + sub
}

// findStatus returns the first enhanced status code (class 2, 4 or 5,
// subject 0-7) in s that stands alone (not part of a longer dotted
// number), or "".
func findStatus(s string) string { return scanStatus(s, false) }

// findFailStatus is findStatus for 4.x.x and 5.x.x codes only: a
// transcript's "250 2.1.5 Ok" before the failure is no answer.
func findFailStatus(s string) string { return scanStatus(s, true) }

func scanStatus(s string, failOnly bool) string {
	for i := 0; i+5 <= len(s); i++ {
		c := s[i]
		if c != '2' && c != '4' && c != '5' || failOnly && c == '2' {
			continue
		}
		if i > 0 && (isDigit(s[i-1]) || s[i-1] == '.') {
			continue
		}
		if s[i+1] != '.' || s[i+2] < '0' || s[i+2] > '7' {
			continue
		}
		j := i + 3
		if j < len(s) && isDigit(s[j]) {
			continue // a two-digit subject
		}
		if j >= len(s) || s[j] != '.' {
			continue
		}
		j++
		k := j
		for k < len(s) && k-j < 3 && isDigit(s[k]) {
			k++
		}
		if k == j || (k < len(s) && (isDigit(s[k]) || s[k] == '.' && k+1 < len(s) && isDigit(s[k+1]))) {
			continue
		}
		return s[i:k]
	}
	return ""
}

// findReplyCode returns the first SMTP reply code (2xx, 4xx, 5xx) in s
// that stands alone as a word, or "".
func findReplyCode(s string) string { return scanReplyCode(s, false) }

// findFailReplyCode is findReplyCode for 4xx and 5xx codes only.
func findFailReplyCode(s string) string { return scanReplyCode(s, true) }

func scanReplyCode(s string, failOnly bool) string {
	for i := 0; i+3 <= len(s); i++ {
		c := s[i]
		if c != '2' && c != '4' && c != '5' || failOnly && c == '2' {
			continue
		}
		if i > 0 && !isCodeLead(s[i-1]) {
			continue
		}
		if !isDigit(s[i+1]) || !isDigit(s[i+2]) || s[i+1] > '5' {
			continue
		}
		if i+3 < len(s) && s[i+3] != ' ' && s[i+3] != '-' && s[i+3] != '\t' &&
			!(s[i+3] == ',' && i > 0 && s[i-1] == ':') { // Zoho's "ERROR_CODE :421,"
			continue
		}
		return s[i : i+3]
	}
	return ""
}

func isCodeLead(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':' || c == '(' || c == '[' || c == '\'' || c == '"' || c == ';' || c == '<' || c == '>' || c == '=' || c == ','
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// sureUnknown are phrases by which a receiving system says in its own
// words, not in a filter's, that the mailbox does not exist: an unknown
// user they name is hard whatever the code and the command.
var sureUnknown = []string{
	"address couldn't be found",
	"not listed in domino directory", "not listed in public name & address book",
	"recipient name is not recognized", "unknown user:", "invalid final delivery userid",
	"no mailbox here by that name", "recipnotfound", "requested action not taken: mailbox unavailable (", "delivery error: dd this user doesn't have a",
	"recipientnotfound", "remote server returned unknown recipient",
	"adresse destinataire invalide",      // La Poste: "Adresse destinataire invalide. Invalid recipient. LPN007_416"
	"no valid recipients for this mm",    // Verizon Wireless's MMS gateway: no such number
	"please check if address is correct", // Trend Micro InterScan MSS, after a refused RCPT TO
	"as(201806281)",                      // Office 365's directory-based edge blocking
	"(user not found)",                   // GroupWise's own lookup
	"is unavailable: user not found",     // Mail.ru: "Local mailbox x@... is unavailable: user not found"
}

// contextBlocks are phrases that, in the text around a recipient's
// reply, say the refusal was a block or a policy, whatever the reply's
// own words: such a recipient is never hard.
var contextBlocks = []string{
	"my name was rejected", "blocked", "spamhaus", "blacklist", "blocklist", "spam",
	"dmarc", "spf", "refused due to", "is listed", "listed on", "reputation",
	"sender address rejected", "sender rejected", "relay access denied", "relaying denied",
}
