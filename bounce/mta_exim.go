package bounce

// eximFamily: Exim without a DSN (and the providers that run it): "This
// message was created automatically by mail delivery software.", then
// each failed address on its own line with the indented reason below it.
var eximFamily = family{
	name: "exim",
	detect: []string{
		"this message was created automatically by mail delivery software",
		"a message that you sent could not be delivered to one or more of its",
		"a message that you sent has not yet been delivered to one or more of its",
	},
	start: []string{
		"the following address(es) failed:", "this is a permanent error. the following address(es) failed:",
		"could not be delivered to one or more of its recipients.",
		"has not yet been delivered to one or more of its",
	},
	end: []string{
		"------ this is a copy of the message", "------ this is a copy of the body of the message",
		"------ this is a copy of the message's headers", "reporting-mta:",
	},
	delay: []string{"has not yet been delivered", "no action is required on your part", "delay reason"},
}
