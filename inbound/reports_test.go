package inbound_test

import (
	"fmt"
	"strings"
)

// The reports the tests send, in the shapes RFC 3464 (DSN), RFC 5965 (ARF)
// and RFC 3834 (auto-reply) give them, with example.net addresses.

// dsn is a delivery status notification to rcpt (a VERP address) about
// the message sent to failed: action "failed" or "delayed", with status.
func dsn(rcpt, failed, action, status, diag string) string {
	return crlf(fmt.Sprintf(`From: MAILER-DAEMON@mta.example.org (Mail Delivery System)
To: %[1]s
Subject: Undelivered Mail Returned to Sender
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B1"

--B1
Content-Type: text/plain

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

<%[2]s>: host mx.example.net said: %[5]s

--B1
Content-Type: message/delivery-status

Reporting-MTA: dns; mta.example.org
Arrival-Date: Sat, 28 Nov 2026 04:00:00 +0000

Final-Recipient: rfc822; %[2]s
Original-Recipient: rfc822;%[2]s
Action: %[3]s
Status: %[4]s
Remote-MTA: dns; mx.example.net
Diagnostic-Code: smtp; %[5]s

--B1
Content-Type: text/rfc822-headers

Return-Path: <%[1]s>
From: news@shop.example.com
To: %[2]s
Subject: News

--B1--
`, rcpt, failed, action, status, diag))
}

// arf is a feedback report (a complaint) about the message sent to
// complainer, delivered to rcpt.
func arf(rcpt, complainer string) string {
	return crlf(fmt.Sprintf(`From: feedback@fbl.example.net
To: %[1]s
Subject: Complaint about message from shop.example.com
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="B2"

--B2
Content-Type: text/plain

This is an email abuse report for an email message received from IP
192.0.2.1.

--B2
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: ExampleFBL/1.0
Version: 1
Original-Mail-From: <%[1]s>
Original-Rcpt-To: <%[2]s>
Arrival-Date: Sat, 28 Nov 2026 04:00:00 +0000
Source-IP: 192.0.2.1

--B2
Content-Type: message/rfc822

Return-Path: <%[1]s>
From: news@shop.example.com
To: %[2]s
Subject: News

Hello.
--B2--
`, rcpt, complainer))
}

// autoReply is an out-of-office answer delivered to rcpt.
func autoReply(rcpt, from string) string {
	return crlf(fmt.Sprintf(`From: %[2]s
To: %[1]s
Subject: Out of office: News
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: text/plain

I am out of the office until Monday, with no access to my mail.
`, rcpt, from))
}

// crlf makes s's line ends CRLF.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
