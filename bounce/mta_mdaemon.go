package bounce

// mdaemonFamily: Alt-N MDaemon ("The attached message had PERMANENT fatal
// delivery errors!", "--- Session Transcript ---").
var mdaemonFamily = family{
	name:   "mdaemon",
	detect: []string{"the attached message had permanent fatal delivery errors", "mdaemon"},
	start:  []string{"--- session transcript ---", "permanent fatal delivery errors!"},
	delay:  []string{"the attached message has not been delivered yet", "temporary delivery errors"},
}
