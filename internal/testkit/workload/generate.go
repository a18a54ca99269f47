package workload

//go:generate go run ./gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
)

// Sizes of the workload's files, in bytes.
const (
	ImageSize      = 20 << 10
	AttachmentSize = 50 << 10
)

// Samples is the number of sample recipients.
const Samples = 16

// The call body's shape, in the field order of the written JSON. The types
// mirror postroom.Call's JSON, which this package cannot import.
type (
	call struct {
		AccountID    string      `json:"account_id"`
		GlobalParams globals     `json:"global_params"`
		Key          string      `json:"key"`
		Message      message     `json:"message"`
		Recipients   []recipient `json:"recipients"`
	}
	globals struct {
		CompanyName    string `json:"company_name"`
		SiteURL        string `json:"site_url"`
		SupportEmail   string `json:"support_email"`
		UnsubscribeURL string `json:"unsubscribe_url"`
		Year           int    `json:"year"`
	}
	message struct {
		Attachments    []attachment `json:"attachments"`
		FromEmail      string       `json:"from_email"`
		FromName       string       `json:"from_name"`
		Headers        []header     `json:"headers"`
		HTML           string       `json:"html"`
		Images         []inline     `json:"images"`
		Subject        string       `json:"subject"`
		TemplateEngine string       `json:"template_engine"`
		Text           string       `json:"text"`
	}
	attachment struct {
		Name        string `json:"name"`
		ContentType string `json:"content_type"`
		Content     []byte `json:"content"` // base64, as encoding/json writes []byte
	}
	inline struct {
		Name        string `json:"name"`
		CID         string `json:"cid"`
		ContentType string `json:"content_type"`
		Content     []byte `json:"content"`
	}
	header struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	recipient struct {
		Email  string `json:"email"`
		Name   string `json:"name"`
		Params params `json:"params"`
	}
	params struct {
		FirstName string `json:"first_name"`
		Items     []item `json:"items"`
		OrderID   string `json:"order_id"`
		Total     string `json:"total"`
		VIP       bool   `json:"vip"`
	}
	item struct {
		Name  string `json:"name"`
		Price string `json:"price"`
		Qty   int    `json:"qty"`
	}
)

// firstNames are the sample recipients' first names, in order. Some need
// HTML escaping (O'Brien, Ana & Luis), some are not ASCII.
var firstNames = [Samples]string{
	"Alice", "Bob", "Zoë", "O'Brien", "José", "Ana & Luis", "Chen", "Priya",
	"Mårten", "Fatima", "Dmitri", "Léa", "Kwame", "Yuki", "Grace", "Omar",
}

// products are what the samples ordered; the names need escaping too.
var products = []string{
	"Wireless headphones <Pro>",
	"USB-C charging cable (2 m)",
	"Ceramic coffee mug",
	"Notebook, dotted, A5",
	"Stainless steel water bottle",
	`Phone case "Slim"`,
	"Desk lamp",
	"Merino wool socks, 3-pack",
}

// Generate returns the workload, transactional.json: a message.send call
// body with an order confirmation (html, text and subject templates, two
// inline PNGs of ImageSize bytes, a PDF of AttachmentSize bytes, three
// extra headers), five global params and Samples sample recipients with
// five params each, sample i at Address(i). The same bytes come out on
// every run and every Go version; `go generate ./internal/testkit/workload` writes
// them at FromRoot, and a test checks that the committed file matches.
func Generate() ([]byte, error) {
	logo, err := pngOfSize(stripes(130, 52, color.NRGBA{0x38, 0x69, 0xd4, 0xff}, color.NRGBA{0x22, 0xbc, 0x66, 0xff}), ImageSize)
	if err != nil {
		return nil, err
	}
	banner, err := pngOfSize(stripes(190, 35, color.NRGBA{0xf4, 0xa2, 0x61, 0xff}, color.NRGBA{0xe7, 0x6f, 0x51, 0xff}), ImageSize)
	if err != nil {
		return nil, err
	}
	pdf, err := invoicePDF(AttachmentSize)
	if err != nil {
		return nil, err
	}
	c := call{
		AccountID: "bench",
		Key:       "bench-key",
		GlobalParams: globals{
			CompanyName:    "Example Shop",
			SiteURL:        "https://shop.example.com",
			SupportEmail:   "support@shop.example.com",
			UnsubscribeURL: "https://shop.example.com/preferences",
			Year:           2024,
		},
		Message: message{
			FromEmail: "orders@shop.example.com",
			FromName:  "Example Shop",
			Headers: []header{
				{"X-Campaign-ID", "order-confirmation-2024"},
				{"X-Entity-Ref-ID", "anchors-benchmark"},
				{"List-Unsubscribe", "<mailto:unsubscribe@shop.example.com>"},
			},
			Subject:        subject,
			HTML:           html,
			Text:           text,
			TemplateEngine: "handlebars",
			Images: []inline{
				{"logo.png", "logo@anchors", "image/png", logo},
				{"banner.png", "banner@anchors", "image/png", banner},
			},
			Attachments: []attachment{{"invoice.pdf", "application/pdf", pdf}},
		},
	}
	for i := range Samples {
		c.Recipients = append(c.Recipients, sample(i))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("workload: encoding: %w", err)
	}
	return buf.Bytes(), nil
}

// sample returns sample recipient i: three items from products, an order
// id, a total and every third sample a VIP, all computed from i.
func sample(i int) recipient {
	p := params{
		FirstName: firstNames[i],
		OrderID:   fmt.Sprintf("ORD-%08d", 10000000+37*i),
		Total:     fmt.Sprintf("$%d.%02d", 20+17*i, 7*i%100),
		VIP:       i%3 == 0,
	}
	for j := range 3 {
		p.Items = append(p.Items, item{
			Name:  products[(i+j)%len(products)],
			Price: fmt.Sprintf("$%d.%02d", 5+(7*i+13*j)%120, (31*i+j)%100),
			Qty:   (i+j)%4 + 1,
		})
	}
	return recipient{Email: Address(i), Name: firstNames[i] + " Example", Params: p}
}
