package bounce

// genericFamily: the phrases many smaller servers share, tried last.
var genericFamily = family{
	name: "text",
	detect: []string{
		"could not be delivered to the following recipient",
		"couldn't be delivered to the following recipient",
		"was undeliverable", "undeliverable to the following",
		"could not be delivered", "could not deliver", "unable to deliver",
		"delivery failure", "delivery failed", "permanent error",
		"failed permanently", "returned mail", "undeliverable",
		"non-delivery", "mail delivery failed", "delivery problem",
	},
	start: []string{
		"the following recipient", "following address", "following recipient",
		"could not be delivered to", "unable to deliver",
	},
}
