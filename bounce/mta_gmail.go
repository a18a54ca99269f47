package bounce

// gmailFamily: Gmail's and Google Workspace's text ("Delivery to the
// following recipient failed permanently:", "Technical details of
// permanent failure:", and the newer "Address not found ... Your message
// wasn't delivered to ... because ...", "The response from the remote
// server was:").
var gmailFamily = family{
	name: "gmail",
	detect: []string{
		"delivery to the following recipient failed permanently",
		"delivery to the following recipients failed permanently",
		"technical details of permanent failure",
		"technical details of temporary failure",
		"delivery to the following recipient has been delayed",
		"the response from the remote server was",
		"the response was:",
		"google tried to deliver your message",
		"your message wasn't delivered to",
		"there was a temporary problem delivering your message to",
	},
	start: []string{
		"delivery to the following recipient failed permanently:",
		"delivery to the following recipients failed permanently:",
		"delivery to the following recipient has been delayed:",
		"your message wasn't delivered to",
		"there was a temporary problem delivering your message to",
	},
	end: []string{"----- original message -----", "----- message truncated -----"},
	delay: []string{
		"technical details of temporary failure", "has been delayed", "gmail will retry",
		"will retry for", "delivery incomplete", "temporary problem delivering",
	},
}
