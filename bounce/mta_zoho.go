package bounce

// zohoFamily: Zoho Mail ("This message was created automatically by mail
// delivery software." with Zoho's "Invalid Address" / reason lines).
var zohoFamily = family{
	name:   "zoho",
	detect: []string{"zoho mail", "mx.zohomail.com", "zoho.com"},
	start:  []string{"failed:", "following address(es) failed"},
	end:    []string{"received:from", "------ this is a copy of the message"},
}
