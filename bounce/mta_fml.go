package bounce

import "strings"

// fmlFamily: the notices of fml, the Japanese mailing-list manager, that
// refuse a post ("You are not a member of this mailing list <list@...>.",
// "Duplicated Message-ID in <list@...>."): the list's address is the
// recipient that refused, never an address that is dead. They come from
// the list's -admin address, not a mail system, so they are known by
// their headers (fmlNotice), not by their text.
var fmlFamily = family{
	name: "fml",
	end:  []string{"original mail as follows:", "if you know the general guide of this list"},
}

// fmlNotice reports whether h, a message's header, is an fml notice: fml
// names itself in X-MLServer and writes its own Message-IDs
// ("<...FML...@...>"); the posts it distributes keep their authors'.
func fmlNotice(h header) bool {
	ml := h.get("X-MLServer")
	return ml != "" && strings.Contains(lowerASCII(ml), "fml") &&
		strings.Contains(lowerASCII(h.get("Message-ID")), ".fml")
}
