package bounce

// mailMarshalFamily: MailMarshal (Trustwave) ("Your message: ... could
// not be delivered to the following address: ... Reason:").
var mailMarshalFamily = family{
	name: "mailmarshal",
	detect: []string{
		"mailmarshal", "could not be delivered to the following address:",
	},
	start: []string{"could not be delivered to the following address:"},
}
