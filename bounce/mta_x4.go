package bounce

// x4Family: qmail descendants that reword qmail-send's text (Bigfoot,
// Spamfree, the "X4" family): "This is the mail delivery agent at ...",
// "I was not able to deliver your message to the following addresses."
var x4Family = family{
	name: "x4",
	detect: []string{
		"this is the mail delivery agent at",
		"i was not able to deliver your message to the following addresses",
		"this is the mail transport agent at",
		"i was unable to deliver your message to the following addresses",
	},
	start: []string{"to the following addresses."},
	end:   []string{"--- below this line is a copy of the message", "--- original message follows."},
}
