package suppression

// Scopes: which of an address's mail an entry silences (postroom.Scope),
// and the list id of a ScopeList entry. An entry's key is (account,
// address, scope, list): an address has at most one entry per scope and
// list, and the list is "" unless the scope is ScopeList.

import (
	"fmt"
	"strings"

	"github.com/postroom/postroom"
)

// maxList is the longest list id (postroom.MaxListIDBytes, RFC 2919 §2).
const maxList = postroom.MaxListIDBytes

// normalList returns a list id as entries keep it, lower-cased (list ids
// compare case-insensitively, RFC 2919 §3), or a *postroom.ValidationError
// on field "list" when it is not RFC 2919's shape: a dot-atom of at most
// 255 octets with at least one dot (label "." namespace). Angle brackets
// around it, as the List-Id header writes it, are taken off. It is the
// check postroom makes of a call's List-Id, written again here: the root
// package keeps its own unexported.
func normalList(id string) (string, error) {
	id = strings.TrimSpace(id)
	if len(id) >= 2 && id[0] == '<' && id[len(id)-1] == '>' {
		id = id[1 : len(id)-1]
	}
	const shape = "want label.namespace, such as news.shop.example.com (RFC 2919)"
	switch {
	case id == "":
		return "", invalid("list", "empty: "+shape)
	case len(id) > maxList:
		return "", invalid("list", fmt.Sprintf("longer than %d octets (RFC 2919)", maxList))
	case !strings.Contains(id, "."):
		return "", invalid("list", "no dot: "+shape)
	}
	for label := range strings.SplitSeq(id, ".") {
		if label == "" {
			return "", invalid("list", "an empty label (a leading, trailing or double dot): "+shape)
		}
		for i := 0; i < len(label); i++ {
			if !isAtext(label[i]) {
				return "", invalid("list", fmt.Sprintf("holds %q, not a dot-atom character: %s", label[i], shape))
			}
		}
	}
	return strings.ToLower(id), nil
}

// isAtext reports whether c is an RFC 5322 atext character.
func isAtext(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// knownScope reports whether s is one of the scopes.
func knownScope(s postroom.Scope) bool {
	switch s {
	case postroom.ScopeAll, postroom.ScopeLists, postroom.ScopeList:
		return true
	}
	return false
}

// wantScope is the reason of a refused scope.
const wantScope = "want all, lists or list"

// entryKey checks the scope and list of an entry's key and returns them as
// kept: an empty scope is ScopeAll; ScopeList needs a list, and the other
// scopes take none (a list without ScopeList is refused rather than
// guessed at: all mail or that list alone).
func entryKey(scope postroom.Scope, list string) (postroom.Scope, string, error) {
	if scope == "" {
		scope = postroom.ScopeAll
	}
	if !knownScope(scope) {
		return "", "", invalid("scope", fmt.Sprintf("%q: %s", scope, wantScope))
	}
	if scope != postroom.ScopeList {
		if list != "" {
			return "", "", invalid("list", fmt.Sprintf("given with scope %s: a list goes with scope list only", scope))
		}
		return scope, "", nil
	}
	if list == "" {
		return "", "", invalid("list", "empty: scope list needs the list id")
	}
	l, err := normalList(list)
	if err != nil {
		return "", "", err
	}
	return scope, l, nil
}

// sameKey reports whether e has the scope and list given.
func (e *Entry) sameKey(scope postroom.Scope, list string) bool {
	return e.Scope == scope && e.List == list
}

// compareKey orders entries as List returns them: by address, scope and
// list, bytewise (as PostgreSQL's COLLATE "C").
func compareKey(x, y *Entry) int {
	if c := strings.Compare(x.Address, y.Address); c != 0 {
		return c
	}
	if c := strings.Compare(string(x.Scope), string(y.Scope)); c != 0 {
		return c
	}
	return strings.Compare(x.List, y.List)
}

// observedKey is the scope and list of the entry o lists: o.Scope when
// given, else by its kind: a bounce silences all mail; a complaint every
// list (about a list message: the complainer wants no more newsletters,
// and still their receipts) or all mail (about a transactional message);
// an unsubscribe its list, or every list when the message named none.
// The list is o.List for ScopeList, "" otherwise. o is checked.
func (o *Observation) observedKey() (postroom.Scope, string) {
	scope := o.Scope
	if scope == "" {
		switch o.Kind {
		case Complaint:
			scope = postroom.ScopeAll
			if o.List != "" {
				scope = postroom.ScopeLists
			}
		case Unsubscribe:
			scope = postroom.ScopeLists
			if o.List != "" {
				scope = postroom.ScopeList
			}
		default:
			scope = postroom.ScopeAll
		}
	}
	if scope != postroom.ScopeList {
		return scope, ""
	}
	return scope, o.List
}

// checkObservedKey checks o's List and Scope (see Observation) and returns
// o with its list lower-cased.
func checkObservedKey(o Observation) (Observation, error) {
	if o.List != "" {
		l, err := normalList(o.List)
		if err != nil {
			return Observation{}, err
		}
		o.List = l
	}
	switch {
	case o.Scope != "" && !knownScope(o.Scope):
		return Observation{}, invalid("scope", fmt.Sprintf("%q: %s", o.Scope, wantScope))
	case o.Scope == postroom.ScopeList && o.List == "":
		return Observation{}, invalid("list", "empty: scope list needs the list id of the message")
	}
	return o, nil
}

// queryKey checks the scope and list filters of a Query and returns them:
// a list alone selects the ScopeList entries of that list.
func queryKey(scope postroom.Scope, list string) (postroom.Scope, string, error) {
	if scope != "" && !knownScope(scope) {
		return "", "", invalid("scope", fmt.Sprintf("%q: %s or none", scope, wantScope))
	}
	if list == "" {
		return scope, "", nil
	}
	if scope != "" && scope != postroom.ScopeList {
		return "", "", invalid("list", fmt.Sprintf("given with scope %s: a list selects scope list entries only", scope))
	}
	l, err := normalList(list)
	if err != nil {
		return "", "", err
	}
	return postroom.ScopeList, l, nil
}

// deleteKey checks the scope and list of a Delete: an empty scope (and no
// list) is every entry of the address, reported as all true.
func deleteKey(scope postroom.Scope, list string) (s postroom.Scope, l string, all bool, err error) {
	if scope == "" && list == "" {
		return "", "", true, nil
	}
	if scope == "" {
		return "", "", false, invalid("list", "given without a scope: give scope list with it, or neither to delete every entry of the address")
	}
	s, l, err = entryKey(scope, list)
	return s, l, false, err
}
