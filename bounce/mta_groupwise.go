package bounce

// groupWiseFamily: Novell / Micro Focus GroupWise ("The message that you
// sent was undeliverable to the following:", "Possible causes:").
var groupWiseFamily = family{
	name: "groupwise",
	detect: []string{
		"the message that you sent was undeliverable to the following",
		"groupwise internet agent",
	},
	start: []string{"was undeliverable to the following:"},
	end:   []string{"possible causes:", "possible solutions:", "original message"},
}
