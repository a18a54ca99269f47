package main

// The suppression list: rejects list, add, delete.

import (
	"context"
	"fmt"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
)

func runRejects(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("want list, add or delete")
	}
	var c common
	var account, email, reason, detail, prefix string
	var all bool
	var limit int
	var ttl time.Duration
	fs := newFlags(e, "rejects "+args[0], "", &c)
	fs.StringVar(&account, "account", "", "the account (required)")
	switch args[0] {
	case "list":
		fs.StringVar(&reason, "reason", "", "only the entries of this reason code (hard-bounce, soft-bounce, spam, unsub, manual)")
		fs.StringVar(&prefix, "prefix", "", "only the addresses that start with this")
		fs.BoolVar(&all, "all", false, "include expired entries")
		fs.IntVar(&limit, "limit", suppression.DefaultLimit, "the most entries listed")
	case "add":
		fs.StringVar(&email, "email", "", "the address (required)")
		fs.StringVar(&reason, "reason", string(postroom.ReasonManual), "the reason code")
		fs.StringVar(&detail, "detail", "", "a comment for people")
		fs.DurationVar(&ttl, "for", 0, "how long it stays listed (0: for ever)")
	case "delete":
		fs.StringVar(&email, "email", "", "the address (required)")
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
	list, err := suppression.NewSQL(pool, suppression.Options{})
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		entries, next, err := list.List(ctx, suppression.Query{AccountID: account, Reason: postroom.ReasonCode(reason), Prefix: prefix, IncludeExpired: all, Limit: limit})
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
		for _, en := range entries {
			line := fmt.Sprintf("%s  %s  listed %s", en.Address, en.Reason, en.Created.UTC().Format(time.RFC3339))
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
		en := suppression.Entry{AccountID: account, Address: email, Reason: postroom.ReasonCode(reason), Detail: detail}
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
		fmt.Fprintf(e.stdout, "listed %s (%s) for account %s\n", got.Address, got.Reason, got.AccountID)
		return nil
	default:
		found, err := list.Delete(ctx, account, email, "", "")
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(e.stdout, map[string]any{"email": email, "deleted": found})
		}
		if !found {
			return fmt.Errorf("%s is not listed for account %s", email, account)
		}
		fmt.Fprintf(e.stdout, "deleted %s from account %s's list\n", email, account)
		return nil
	}
}
