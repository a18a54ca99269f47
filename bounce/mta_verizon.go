package bounce

// verizonFamily: Verizon/Frontier/Biglobe-style notices that speak of the
// "Message could not be delivered to mailbox" and "original message".
var verizonFamily = family{
	name: "verizon",
	detect: []string{
		"message could not be delivered to mailbox",
		"your message could not be delivered to the following recipients",
		"the following recipients did not receive your message",
	},
	start: []string{"following recipients:", "to mailbox"},
}
