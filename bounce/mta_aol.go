package bounce

// aolFamily: AOL's older text ("Your mail to the following recipients
// could not be delivered ...") and AOL on Verizon Media, which writes the
// Yahoo-style "Remote host said" paragraphs.
var aolFamily = family{
	name: "aol",
	detect: []string{
		"your mail to the following recipients could not be delivered",
		"the following recipients could not be delivered because",
		"is not accepting aol mail",
	},
	start: []string{"could not be delivered"},
	end:   []string{"--- below this line is a copy of the message", "----- original message follows -----"},
}
