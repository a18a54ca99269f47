package bounce

// exchangeFamily: Microsoft Exchange (2003 to 2019) and Office 365 /
// Exchange Online non-delivery reports: "Delivery has failed to these
// recipients or groups:", "Your message to ... couldn't be delivered.",
// the address on a line, an explanation, then "Diagnostic information for
// administrators" with "Remote Server returned '550 5.1.1 ...'" or
// "#550 5.1.1 RESOLVER.ADR.RecipNotFound; not found ##".
var exchangeFamily = family{
	name: "exchange",
	detect: []string{
		"delivery has failed to these recipients or groups",
		"your message did not reach some or all of the intended recipients",
		"the following recipient(s) cannot be reached",
		"the following recipient(s) could not be reached",
		"did not reach the following recipient(s)",
		"diagnostic information for administrators",
		"your message couldn't be delivered",
		"your message wasn't delivered to",
		"delivery to the following recipients failed",
		"delivery to the following recipients has been delayed",
		"the following message to",
		"microsoft exchange server",
		"this message was created automatically by mail delivery software. your email message was not delivered",
	},
	start: []string{
		"delivery has failed to these recipients or groups:",
		"the following recipient(s) cannot be reached:",
		"the following recipient(s) could not be reached:",
		"did not reach the following recipient(s):",
		"delivery to the following recipients failed.",
		"delivery to the following recipients has been delayed.",
	},
	end: []string{"original message headers:", "original message details", "\nreceived: from"},
	delay: []string{
		"delivery to the following recipients has been delayed", "delivery has been delayed",
		"this message hasn't been delivered yet", "delivery is delayed", "will continue to try",
		"hasn't been delivered yet",
	},
}
