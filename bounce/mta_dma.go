package bounce

// (This file is not named mta_dragonfly.go: a _dragonfly suffix is a
// build constraint.)

// dragonFlyFamily: the DragonFly Mail Agent (dma) of DragonFly BSD and
// others: "This is the DragonFly Mail Agent ... There was an error
// delivering your mail to <address>.", the remote reply in the next
// paragraph ("... did not like our RCPT TO: 550 ..."), then "Message
// headers follow.".
var dragonFlyFamily = family{
	name:   "dragonfly",
	detect: []string{"this is the dragonfly mail agent", "there was an error delivering your mail to"},
	start:  []string{"there was an error delivering your mail to"},
	end:    []string{"message headers follow.", "original message follows."},
}
