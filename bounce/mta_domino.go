package bounce

// dominoFamily: IBM / HCL (Lotus) Domino and Notes: "Your message ...
// was not delivered to: <address> because: <reason>" ("User ... not
// listed in Domino Directory", "Router: No route found to domain ...").
var dominoFamily = family{
	name: "domino",
	detect: []string{
		"was not delivered to:",
		"not listed in domino directory",
		"not listed in public name & address book",
		"delivery failure report",
	},
	start: []string{"was not delivered to:"},
	end:   []string{"original message follows", "----- original message"},
	delay: []string{"delivery delay report", "has not yet been delivered"},
}
