package bounce

// postfixFamily: Postfix's human-readable part, and the old text-only
// bounces of Postfix before DSNs ("This is the Postfix program at host
// ..."): each "<address>: host ... said: reply (in reply to ... command)".
var postfixFamily = family{
	name: "postfix",
	detect: []string{
		"this is the mail system at host", "this is the postfix program at host",
		"i'm sorry to have to inform you that your message could not",
	},
	start: []string{
		"the mail system", "for further assistance, please send mail to postmaster",
		"for further assistance, please contact your postmaster",
	},
	end: []string{
		"--- delivery report unavailable ---", "content-description: delivery report",
		"content-description: undelivered message", "reporting-mta:", "\n--- \n",
	},
	delay: []string{
		"this is a warning only", "delayed mail (still being retried)",
		"your message could not be delivered for", "will remain in the queue",
	},
}
