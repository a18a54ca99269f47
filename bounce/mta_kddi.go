package bounce

// kddiFamily: the Japanese carriers' notices (KDDI au / EZweb, NTT
// docomo, Biglobe, au one net): "Your mail sent on: ... Could not be
// delivered to: <address> As their mailbox is full.", "The user(s)
// account is disabled.", "Each of the following recipients was rejected
// by a remote mail server.".
var kddiFamily = family{
	name: "kddi",
	detect: []string{
		"could not be delivered to: <", "the user(s) account is", "your mail sent on:",
		"each of the following recipients was rejected by a remote mail server",
		"auone-net.jp", "ezweb.ne.jp",
	},
	start: []string{"could not be delivered to:", "the following recipients was rejected", "your message "},
}
