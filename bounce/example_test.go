package bounce_test

import (
	"fmt"
	"strings"

	"github.com/postroom/postroom/bounce"
)

func ExampleParse() {
	msg := `From: MAILER-DAEMON@mx.example.net (Mail Delivery System)
To: bounces+0123456789abcdef0123456789abcdef@bounce.example.com
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="b"

--b
Content-Type: text/plain

This is the mail system at host mx.example.net.

--b
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net

Final-Recipient: rfc822; gone@example.org
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 <gone@example.org>: Recipient address rejected: User unknown

Final-Recipient: rfc822; busy@example.org
Action: failed
Status: 5.7.1
Diagnostic-Code: smtp; 554 5.7.1 Service unavailable; client host blocked using zen.spamhaus.org

--b--
`
	rep, err := bounce.Parse(strings.NewReader(msg))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Type, rep.SendID)
	for _, r := range rep.Recipients {
		fmt.Println(r.Address, r.Action, r.Status, r.Class, r.Hard)
	}
	// Output:
	// bounce 0123456789abcdef0123456789abcdef
	// gone@example.org failed 5.1.1 user-unknown true
	// busy@example.org failed 5.7.1 spam-blocked false
}
