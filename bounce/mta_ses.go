package bounce

import (
	"encoding/json"
	"strings"
)

// sesFamily: Amazon SES's human-readable part ("An error occurred while
// trying to deliver the mail to the following recipients:"); SES sends
// an RFC 3464 report beside it, which Parse reads first. Its event
// notifications, when SNS mails them (a JSON body), are read by
// readSESJSON.
var sesFamily = family{
	name: "ses",
	detect: []string{
		"an error occurred while trying to deliver the mail to the following recipients",
		"amazon ses has suppressed sending to this address",
		"amazonses.com",
	},
	start: []string{"to the following recipients:"},
}

// sesNotification is the part of an Amazon SES event notification (as
// SNS mails it: a JSON body) that Parse reads.
type sesNotification struct {
	NotificationType string `json:"notificationType"`
	EventType        string `json:"eventType"`
	Bounce           struct {
		BounceType        string         `json:"bounceType"`
		BouncedRecipients []sesRecipient `json:"bouncedRecipients"`
		ReportingMTA      string         `json:"reportingMTA"`
	} `json:"bounce"`
	Complaint struct {
		ComplainedRecipients  []sesRecipient `json:"complainedRecipients"`
		ComplaintFeedbackType string         `json:"complaintFeedbackType"`
	} `json:"complaint"`
	Delivery struct {
		Recipients   []string `json:"recipients"`
		SMTPResponse string   `json:"smtpResponse"`
		ReportingMTA string   `json:"reportingMTA"`
	} `json:"delivery"`
	Mail struct {
		MessageID string `json:"messageId"`
	} `json:"mail"`
}

type sesRecipient struct {
	EmailAddress   string `json:"emailAddress"`
	Action         string `json:"action"`
	Status         string `json:"status"`
	DiagnosticCode string `json:"diagnosticCode"`
}

// readSESJSON reads an Amazon SES notification mailed as JSON (a bounce,
// a complaint or a delivery) into rep, and reports whether text was one.
func readSESJSON(text string, rep *Report) bool {
	if strings.Contains(text, `"Type" : "Notification"`) || strings.Contains(text, `"Type":"Notification"`) {
		// An SNS envelope: the notification is its Message, a string.
		if i := strings.IndexByte(text, '{'); i >= 0 {
			s := strings.NewReplacer("!\n ", "", "\r", "", "\n", "").Replace(text[i:])
			var env struct{ Message string }
			if json.NewDecoder(strings.NewReader(s)).Decode(&env) == nil && strings.HasPrefix(env.Message, "{") {
				return readSESJSON(env.Message, rep)
			}
		}
	}
	i := strings.Index(text, `{"notificationType"`)
	if i < 0 {
		i = strings.Index(text, `{"eventType"`)
	}
	if i < 0 {
		return false
	}
	// SNS wraps long lines with "!" and a line break inside strings.
	s := strings.NewReplacer("!\n ", "", "\r", "", "\n", "").Replace(text[i:])
	var n sesNotification
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&n); err != nil {
		return false
	}
	kind := n.NotificationType
	if kind == "" {
		kind = n.EventType
	}
	rep.Format = "ses-json"
	switch kind {
	case "Bounce":
		rep.ReportingMTA = stripType(n.Bounce.ReportingMTA)
		transient := n.Bounce.BounceType == "Transient"
		for _, r := range n.Bounce.BouncedRecipients {
			a := cleanAddress(r.EmailAddress)
			if a == "" {
				continue
			}
			action := normAction(r.Action)
			if action == "" {
				action = ActionFailed
			}
			c := cand{final: a, action: action, status: findStatus(r.Status), diag: stripType(r.DiagnosticCode)}
			rec := finish(c, action, c.diag, "", "")
			if transient {
				rec.Hard = false
			}
			rep.Recipients = append(rep.Recipients, rec)
		}
		finishType(rep)
	case "Complaint":
		rep.Type = TypeComplaint
		rep.FeedbackType = strings.ToLower(n.Complaint.ComplaintFeedbackType)
		for _, r := range n.Complaint.ComplainedRecipients {
			if a := cleanAddress(r.EmailAddress); a != "" {
				rep.Recipients = append(rep.Recipients, Recipient{Address: a, Action: ActionDelivered, Class: ClassComplaint, Diagnostic: rep.FeedbackType})
			}
		}
	case "Delivery":
		rep.Type = TypeDeliveryReport
		rep.ReportingMTA = stripType(n.Delivery.ReportingMTA)
		for _, r := range n.Delivery.Recipients {
			if a := cleanAddress(r); a != "" {
				rep.Recipients = append(rep.Recipients, Recipient{Address: a, Action: ActionDelivered, Status: findStatus(n.Delivery.SMTPResponse), Class: ClassDelivered, Diagnostic: oneLine(n.Delivery.SMTPResponse)})
			}
		}
	default:
		return false
	}
	return true
}
