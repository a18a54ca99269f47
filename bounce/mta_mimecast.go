package bounce

// mimecastFamily: Mimecast's gateway notices ("Your message couldn't be
// delivered ... mimecast", "The following recipient(s) rejected your
// message").
var mimecastFamily = family{
	name:   "mimecast",
	detect: []string{"mimecast"},
	start:  []string{"could not be delivered to", "couldn't be delivered to", "the following recipient"},
	end:    []string{"message headers", "original message"},
}
