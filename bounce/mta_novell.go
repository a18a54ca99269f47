package bounce

// novellFamily: Novell NetMail and the servers that write "The message
// that you sent could not be delivered to the following recipients" with
// one "address: reason" line each.
var novellFamily = family{
	name:   "novell",
	detect: []string{"the message that you sent could not be delivered to the following recipients", "netmail"},
	start:  []string{"to the following recipients:"},
}
