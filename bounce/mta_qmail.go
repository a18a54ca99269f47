package bounce

// qmailFamily: qmail-send and its descendants (netqmail, qmail-ldap,
// vpopmail): "Hi. This is the qmail-send program at ...", a list of
// "<address>:" paragraphs, each with the remote reply and qmail's own
// "(#5.1.1)" code, then the returned message.
var qmailFamily = family{
	name: "qmail",
	detect: []string{
		"this is the qmail-send program", "this is the qmail program",
		"i'm afraid i wasn't able to deliver your message to the following addresses",
		"i'm not going to try again; this message has been in the queue too long",
	},
	start: []string{
		"this is a permanent error; i've given up. sorry it didn't work out.",
		"sorry it didn't work out.",
		"i'm afraid i wasn't able to deliver your message to the following addresses.",
	},
	end:   []string{"--- below this line is a copy of the message", "--- enclosed are the original headers of the message"},
	delay: []string{"i'm still trying", "this is not a permanent error", "i'm going to keep trying"},
}
