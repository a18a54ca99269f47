package bounce

// mailEnableFamily: MailEnable ("This message is for the sender ...
// Message could not be delivered to ...", "The following recipients were
// unable to be delivered").
var mailEnableFamily = family{
	name: "mailenable",
	detect: []string{
		"mailenable", "the following recipients were unable to be delivered",
		"message could not be delivered to the following recipients",
	},
	start: []string{"unable to be delivered", "could not be delivered to"},
}
