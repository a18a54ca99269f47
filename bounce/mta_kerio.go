package bounce

// kerioFamily: Kerio Connect ("Your message did not reach some or all of
// the intended recipients." with "Undelivered to <address>").
var kerioFamily = family{
	name:   "kerio",
	detect: []string{"kerio connect", "undelivered to "},
	start:  []string{"undelivered to "},
}
