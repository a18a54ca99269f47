package bounce

// sendmailFamily: Sendmail's text ("----- The following addresses had
// permanent fatal errors -----", then "----- Transcript of session
// follows -----" with the SMTP dialogue) and the servers that copy it.
var sendmailFamily = family{
	name: "sendmail",
	detect: []string{
		"----- the following addresses had permanent fatal errors -----",
		"----- the following addresses had transient non-fatal errors -----",
		"----- transcript of session follows -----",
		"the original message was received at",
	},
	start: []string{
		"----- the following addresses had permanent fatal errors -----",
		"----- the following addresses had transient non-fatal errors -----",
		"----- transcript of session follows -----",
	},
	end: []string{
		"----- original message follows -----", "----- message header follows -----",
		"----- unsent message follows -----", "--- returned message follows", "reporting-mta:",
	},
	delay: []string{
		"warning: could not send message for past", "transient non-fatal errors",
		"will keep trying until message is", "warning: message still undelivered",
	},
}
