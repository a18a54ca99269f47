package bounce

// imailFamily: Ipswitch IMail ("Body of message generated response:",
// "Unknown user: <address>", "unable to deliver message to the following
// address(es)").
var imailFamily = family{
	name: "imail",
	detect: []string{
		"body of message generated response:",
		"unable to deliver message to the following address(es)",
		"imail server",
	},
	start: []string{"to the following address(es).", "to the following address(es)"},
	end:   []string{"original message follows."},
}
