package main

// The suppression list: rejects list, add, delete.

import (
	"context"
	"fmt"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
)

func runRejects(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("want list, add or delete")
	}
	if isHelp(args[0]) {
		fmt.Fprintln(e.stderr, "usage: postroom rejects list|add|delete [flags]\n\nRun 'postroom rejects <list|add|delete> -h' for each one's flags.")
		return errHelp
	}
	var c common
	var account, email, reason, detail, prefix, scope, listID string
	var all bool
	var limit int
	var ttl time.Duration
	fs := newFlags(e, "rejects "+args[0], "", &c)
	fs.StringVar(&account, "account", "", "the account (required)")
	switch args[0] {
	case "list":
		fs.StringVar(&reason, "reason", "", "only the entries of this reason code (hard-bounce, soft-bounce, spam, unsub, manual)")
		fs.StringVar(&prefix, "prefix", "", "only the addresses that start with this")
		fs.StringVar(&scope, "scope", "", "only the entries of this scope (all, lists, list)")
		fs.StringVar(&listID, "list", "", "only the entries of this list id (scope list)")
		fs.BoolVar(&all, "all", false, "include expired entries")
		fs.IntVar(&limit, "limit", suppression.DefaultLimit, "the most entries listed")
	case "add":
		fs.StringVar(&email, "email", "", "the address (required)")
		fs.StringVar(&reason, "reason", string(postroom.ReasonManual), "the reason code")
		fs.StringVar(&detail, "detail", "", "a comment for people")
		fs.DurationVar(&ttl, "for", 0, "how long it stays listed (0: for ever)")
		fs.StringVar(&scope, "scope", string(postroom.ScopeAll), "which mail it silences: all, lists (every list message) or list (one list's, with -list)")
		fs.StringVar(&listID, "list", "", "the list id of scope list, such as news.shop.example.com")
	case "delete":
		fs.StringVar(&email, "email", "", "the address (required)")
		fs.StringVar(&scope, "scope", "", "delete the entry of this scope alone (all, lists, list with -list); none: every entry of the address")
		fs.StringVar(&listID, "list", "", "the list id of scope list")
	default:
		return usagef("unknown rejects command %q: want list, add or delete", args[0])
	}
	if _, err := parse(fs, args[1:], 0); err != nil {
		return err
	}
	if account == "" {
		return usagef("-account is required")
	}
	if args[0] != "list" && email == "" {
		return usagef("-email is required")
	}
	pool, err := c.open(ctx, e)
	if err != nil {
		return err
	}
	defer pool.Close()
	list, err := suppression.NewSQL(pgxdb.New(pool), suppression.Options{})
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		entries, next, err := list.List(ctx, suppression.Query{AccountID: account, Reason: postroom.ReasonCode(reason), Prefix: prefix,
			Scope: postroom.Scope(scope), List: listID, IncludeExpired: all, Limit: limit})
		if err != nil {
			return err
		}
		if c.json {
			if entries == nil {
				entries = []suppression.Entry{}
			}
			return printJSON(e.stdout, struct {
				Entries []suppression.Entry `json:"entries"`
				Next    string              `json:"next,omitempty"`
			}{entries, next})
		}
		// Columns: address, reason, scope, list ("-" for none), then when.
		for _, en := range entries {
			l := en.List
			if l == "" {
				l = "-"
			}
			line := fmt.Sprintf("%s  %s  %s  %s  listed %s", en.Address, en.Reason, en.Scope, l, en.Created.UTC().Format(time.RFC3339))
			if !en.Expires.IsZero() {
				line += ", until " + en.Expires.UTC().Format(time.RFC3339)
			}
			if en.Detail != "" {
				line += "  " + en.Detail
			}
			fmt.Fprintln(e.stdout, line)
		}
		if next != "" {
			fmt.Fprintln(e.stdout, "(more entries: raise -limit or narrow with -prefix)")
		}
		return nil
	case "add":
		en := suppression.Entry{AccountID: account, Address: email, Reason: postroom.ReasonCode(reason), Detail: detail, Scope: postroom.Scope(scope), List: listID}
		if ttl < 0 {
			return usagef("-for is negative")
		}
		if ttl > 0 {
			en.Created = time.Now()
			en.Expires = en.Created.Add(ttl)
		}
		got, err := list.Add(ctx, en)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(e.stdout, got)
		}
		fmt.Fprintf(e.stdout, "listed %s (%s, %s) for account %s\n", got.Address, got.Reason, scopeText(got.Scope, got.List), got.AccountID)
		return nil
	default:
		found, err := list.Delete(ctx, account, email, postroom.Scope(scope), listID)
		if err != nil {
			return err
		}
		if c.json {
			out := map[string]any{"email": email, "deleted": found}
			if scope != "" {
				out["scope"] = scope
			}
			if listID != "" {
				out["list"] = listID
			}
			return printJSON(e.stdout, out)
		}
		which := "every entry"
		if scope != "" {
			which = "the entry of " + scopeText(postroom.Scope(scope), listID)
		}
		if !found {
			return fmt.Errorf("%s is not listed (%s) for account %s", email, which, account)
		}
		fmt.Fprintf(e.stdout, "deleted %s of %s from account %s's list\n", which, email, account)
		return nil
	}
}

// scopeText names a scope for people: "all mail", "all lists", "list
// news.shop.example.com".
func scopeText(scope postroom.Scope, list string) string {
	switch scope {
	case postroom.ScopeAll:
		return "all mail"
	case postroom.ScopeLists:
		return "all lists"
	case postroom.ScopeList:
		return "list " + list
	}
	return "scope " + string(scope)
}
