package console

// The suppression pages: the account's list, filtered by address,
// scope and reason, and the removal of an entry after a confirmation.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
)

// Suppressions is what the suppression pages call: the List and Delete
// of a suppression.List, which suppression.Memory and suppression.SQL
// implement.
type Suppressions interface {
	List(ctx context.Context, q suppression.Query) ([]suppression.Entry, string, error)
	Delete(ctx context.Context, accountID, address string, scope postroom.Scope, list string) (bool, error)
}

var _ Suppressions = suppression.List(nil)

// scopes and reasons are the filters' choices.
var (
	scopes  = []postroom.Scope{postroom.ScopeAll, postroom.ScopeLists, postroom.ScopeList}
	reasons = []postroom.ReasonCode{postroom.ReasonHardBounce, postroom.ReasonSoftBounce, postroom.ReasonSpam, postroom.ReasonUnsub, postroom.ReasonManual}
)

// suppressionsView is the data of the suppressions page.
type suppressionsView struct {
	Prefix, Scope, Reason, List string
	Expired                     bool
	Scopes                      []postroom.Scope
	Reasons                     []postroom.ReasonCode
	Entries                     []suppression.Entry
	Next                        string
}

// suppressions shows the account's entries the form selects.
func (h *Handler) suppressions(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	v := &suppressionsView{
		Prefix: strings.TrimSpace(r.FormValue("prefix")), Scope: r.FormValue("scope"), Reason: r.FormValue("reason"),
		List: strings.TrimSpace(r.FormValue("list")), Expired: r.FormValue("expired") != "",
		Scopes: scopes, Reasons: reasons,
	}
	var err error
	v.Entries, v.Next, err = h.opts.Suppressions.List(r.Context(), suppression.Query{
		AccountID: account, Prefix: v.Prefix, Scope: postroom.Scope(v.Scope), Reason: postroom.ReasonCode(v.Reason),
		List: v.List, IncludeExpired: v.Expired, Limit: h.opts.PageSize, Cursor: r.FormValue("cursor"),
	})
	var notice string
	if a := r.FormValue("removed"); a != "" {
		notice = "Removed " + a + " from the suppression list."
	}
	if ve := (*postroom.ValidationError)(nil); errors.As(err, &ve) {
		h.show(w, r, http.StatusBadRequest, &view{Title: "Suppression list", Account: account, Suppressed: v, Problem: "The filter was refused: " + ve.Error()})
		return
	}
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, account, "Suppression list", "The suppression list could not answer; try again.", err)
		return
	}
	h.show(w, r, 0, &view{Title: "Suppression list", Account: account, Suppressed: v, Notice: notice})
}

// removeView is the data of the confirmation of a removal.
type removeView struct {
	Entry suppression.Entry
}

// entryOf returns the entry of the form's address, scope and list (the
// key of an entry), or false when the account has none.
func (h *Handler) entryOf(r *http.Request, account string) (suppression.Entry, bool, error) {
	address := strings.TrimSpace(r.FormValue("email"))
	scope, list := postroom.Scope(r.FormValue("scope")), strings.TrimSpace(r.FormValue("list"))
	if address == "" || scope == "" {
		return suppression.Entry{}, false, nil
	}
	found, _, err := h.opts.Suppressions.List(r.Context(), suppression.Query{
		AccountID: account, Prefix: address, Scope: scope, List: list, IncludeExpired: true, Limit: 10,
	})
	if err != nil {
		return suppression.Entry{}, false, err
	}
	for _, e := range found {
		if strings.EqualFold(e.Address, address) && e.Scope == scope && e.List == strings.ToLower(list) {
			return e, true, nil
		}
	}
	return suppression.Entry{}, false, nil
}

// confirmRemove asks whether to remove the entry; it changes nothing.
func (h *Handler) confirmRemove(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	e, found, err := h.entryOf(r, account)
	if ve := (*postroom.ValidationError)(nil); errors.As(err, &ve) {
		found, err = false, nil
	}
	switch {
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, account, "Remove", "The suppression list could not answer; try again.", err)
	case !found:
		h.fail(w, r, http.StatusNotFound, account, "Remove", "This address has no such entry in the suppression list.", nil)
	default:
		h.show(w, r, 0, &view{Title: "Remove " + e.Address, Account: account, Remove: &removeView{Entry: e}})
	}
}

// remove removes the entry the confirmation names, then shows the list.
func (h *Handler) remove(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	address := strings.TrimSpace(r.PostFormValue("email"))
	scope, list := postroom.Scope(r.PostFormValue("scope")), strings.TrimSpace(r.PostFormValue("list"))
	if address == "" || scope == "" {
		h.fail(w, r, http.StatusBadRequest, account, "Remove", "The form names no address and scope.", nil)
		return
	}
	removed, err := h.opts.Suppressions.Delete(r.Context(), account, address, scope, list)
	if ve := (*postroom.ValidationError)(nil); errors.As(err, &ve) {
		h.fail(w, r, http.StatusBadRequest, account, "Remove", "The removal was refused: "+ve.Error(), nil)
		return
	}
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, account, "Remove", "The suppression list could not answer; nothing was removed.", err)
		return
	}
	if !removed {
		h.fail(w, r, http.StatusNotFound, account, "Remove", "This address had no such entry in the suppression list: nothing was removed.", nil)
		return
	}
	h.opts.Logger.Info("console: removed a suppression", "account_id", account, "email", address, "scope", scope, "list", list)
	seeOther(w, r, "suppressions", url.Values{"removed": {address}})
}
