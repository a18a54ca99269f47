package bounce

// messagingServerFamily: Sun Java System / Oracle Communications
// Messaging Server and its predecessors ("This report relates to a
// message you sent with the following header fields:", "Your message
// cannot be delivered to the following recipients:", "Recipient address:
// ...", "Reason: ...").
var messagingServerFamily = family{
	name: "messagingserver",
	detect: []string{
		"this report relates to a message you sent with the following header fields",
		"your message cannot be delivered to the following recipients",
	},
	start: []string{
		"cannot be delivered to the following recipients:",
		"has not yet been delivered to the following recipients:",
	},
	delay: []string{"has not yet been delivered to the following recipients"},
}
