package bounce

// courierFamily: the Courier mail server ("This is a delivery status
// notification from ..., running the Courier mail server", "Your message
// to the following recipients cannot be delivered:", then the SMTP
// dialogue with ">>> RCPT TO" and "<<< 550 ...").
var courierFamily = family{
	name: "courier",
	detect: []string{
		"running the courier mail server",
		"this is a delivery status notification from",
	},
	start: []string{
		"your message to the following recipients cannot be delivered:",
		"undeliverable mail", "delayed mail",
	},
	delay: []string{"delayed mail", "has not been delivered to the following recipients yet"},
}
