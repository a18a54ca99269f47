package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/suppression"
)

// A bounce received some other way than by SMTP (a pipe, a webhook) goes
// to Handle with the address it was delivered to.
func ExampleReceiver_Handle() {
	ctx := context.Background()
	verp := postroom.VERP{Domain: "bounce.example.com"}
	sends, _ := events.NewMemory(events.MemoryOptions{}) // a Mailer's OnEvent feeds it
	list, _ := suppression.NewMemory(suppression.Options{})
	r, err := inbound.New(inbound.Options{
		VERP: verp, Sends: sends, Suppressions: list,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}

	// The Mailer sent a message to gone@example.net with this send id...
	id := "0123456789abcdef0123456789abcdef"
	sends.OnEvent(ctx, postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: "acct-1", Email: "gone@example.net"})

	// ...and its bounce came back to the VERP address.
	msg := strings.ReplaceAll(`From: MAILER-DAEMON@mx.example.org
To: bounces+0123456789abcdef0123456789abcdef@bounce.example.com
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="b"

--b
Content-Type: text/plain

Your message could not be delivered.

--b
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.org

Final-Recipient: rfc822; gone@example.net
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 <gone@example.net>: User unknown

--b--
`, "\n", "\r\n")
	out, err := r.Handle(ctx, strings.NewReader(msg), verp.Address(id))
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Verdict)
	for _, e := range out.Events {
		fmt.Println(e.Type, e.Email, e.Reason, e.Status)
	}
	for _, e := range out.Listed {
		fmt.Println("listed:", e.Address, e.Reason)
	}
	// Output:
	// recorded
	// hard_bounce gone@example.net user-unknown 5.1.1
	// listed: gone@example.net hard-bounce
}

// A program that Postfix's pipe(8) runs for each bounce tells Postfix to
// offer the message again later by exiting 75 (EX_TEMPFAIL): for a bounce
// that came back before its send was recorded (and was not recorded
// within Options.SendWait either), and when a store failed.
func ExampleVerdictRetryLater() {
	ctx := context.Background()
	verp := postroom.VERP{Domain: "bounce.example.com"}
	sends, _ := events.NewMemory(events.MemoryOptions{})
	r, err := inbound.New(inbound.Options{
		VERP: verp, Sends: sends, Logger: slog.New(slog.DiscardHandler),
		SendWait: 50 * time.Millisecond, // 5 s by default
	})
	if err != nil {
		panic(err)
	}
	exitCode := func(out inbound.Outcome, err error) int {
		var se *inbound.StoreError
		switch {
		case errors.As(err, &se), err == nil && out.Verdict == inbound.VerdictRetryLater:
			return 75 // EX_TEMPFAIL: Postfix tries again later
		case err != nil:
			return 65 // EX_DATAERR: Postfix returns the message
		}
		return 0
	}

	id := "00112233445566778899aabbccddeeff"
	msg := "From: MAILER-DAEMON@mx.example.org\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.org\r\n\r\n" +
		"Final-Recipient: rfc822; gone@example.net\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--b--\r\n"

	out, err := r.Handle(ctx, strings.NewReader(msg), verp.Address(id))
	fmt.Println(out.Verdict, exitCode(out, err))

	// The send's record is written; Postfix's next attempt is taken.
	sends.OnEvent(ctx, postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: "acct-1", Email: "gone@example.net"})
	out, err = r.Handle(ctx, strings.NewReader(msg), verp.Address(id))
	fmt.Println(out.Verdict, exitCode(out, err))
	// Output:
	// retry-later 75
	// recorded 0
}
