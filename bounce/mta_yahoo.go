package bounce

// yahooFamily: Yahoo! Mail's text: "Sorry, we were unable to deliver your
// message to the following address.", then "<address>:" and "Remote host
// said: ..." or Yahoo's own reason, then the returned message.
var yahooFamily = family{
	name: "yahoo",
	detect: []string{
		"sorry, we were unable to deliver your message to the following address",
		"unable to deliver message to the following address",
	},
	start: []string{"to the following address."},
	end:   []string{"--- below this line is a copy of the message"},
	delay: []string{"message will be retried", "delivery will be retried"},
}
