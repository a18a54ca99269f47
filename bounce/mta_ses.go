package bounce

// sesFamily: Amazon SES's human-readable part ("An error occurred while
// trying to deliver the mail to the following recipients:"); SES sends
// an RFC 3464 report beside it, which Parse reads first.
var sesFamily = family{
	name: "ses",
	detect: []string{
		"an error occurred while trying to deliver the mail to the following recipients",
		"amazon ses has suppressed sending to this address",
		"amazonses.com",
	},
	start: []string{"to the following recipients:"},
}
