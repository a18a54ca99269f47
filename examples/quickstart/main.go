// Command quickstart sends a templated order confirmation to three
// recipients, with per-recipient params, an inline logo, a PDF-like
// attachment and a bcc, through transport.Dir: each message becomes an .eml
// file that any mail client opens. It needs no server and no flags.
//
//	go run ./examples/quickstart
//
// It imports only the module's public packages (postroom, transport),
// never internal/; nothing imports it.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"os"
	"path/filepath"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// callJSON is a message.send call body exactly as the spec has it; the
// image and attachment contents are filled in below.
const callJSON = `{
  "key": "quickstart-key",
  "account_id": "quickstart",
  "message": {
    "from_name": "Example Shop",
    "from_email": "orders@shop.example.com",
    "subject": "Your order #{{order_id}} is confirmed, {{first_name}}",
    "html": "<html><body><img src=\"cid:logo@shop\" alt=\"{{company}}\" width=\"64\" height=\"64\"><h1>Thanks, {{first_name}}!</h1><p>Order <b>#{{order_id}}</b>:</p><ul>{{#each items}}<li>{{qty}} × {{name}} — {{price}}</li>{{/each}}</ul>{{#if vip}}<p>As a VIP, shipping is on us.</p>{{/if}}<p><a href=\"{{site_url}}/orders/{{order_id}}\">Track your order</a></p></body></html>",
    "text": "Thanks, {{first_name}}!\n\nOrder #{{order_id}}:\n{{#each items}}- {{qty}} x {{name}} ({{price}})\n{{/each}}{{#if vip}}As a VIP, shipping is on us.\n{{/if}}\nTrack it at {{site_url}}/orders/{{order_id}}\n",
    "bcc": "archive@shop.example.com",
    "headers": [
      {"name": "List-Unsubscribe", "value": "<{{site_url}}/unsubscribe?u={{url first_name}}>"},
      {"name": "X-Campaign-ID", "value": "order-confirmation"}
    ],
    "template_engine": "handlebars",
    "images": [{"name": "logo.png", "cid": "logo@shop", "content_type": "image/png", "content": ""}],
    "attachments": [{"name": "receipt.txt", "content_type": "text/plain; charset=utf-8", "content": ""}]
  },
  "global_params": {"company": "Example Shop", "site_url": "https://shop.example.com"},
  "recipients": [
    {"email": "alice@example.org", "name": "Alice Example", "params": {"first_name": "Alice", "order_id": "1001", "vip": true,
      "items": [{"qty": 1, "name": "Wireless headphones <Pro>", "price": "$89.00"}]}},
    {"email": "zoe@example.org", "name": "Zoë Example", "params": {"first_name": "Zoë", "order_id": "1002", "vip": false,
      "items": [{"qty": 2, "name": "Ceramic mug", "price": "$24.00"}, {"qty": 1, "name": "Notebook, A5", "price": "$7.50"}]}},
    {"email": "obrien@example.org", "name": "Pat O'Brien", "params": {"first_name": "Pat", "order_id": "1003", "vip": false,
      "items": [{"qty": 3, "name": "Tea & biscuits", "price": "$15.00"}]}}
  ]
}`

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	var call postroom.Call
	if err := json.Unmarshal([]byte(callJSON), &call); err != nil {
		return err
	}
	logo, err := logoPNG()
	if err != nil {
		return err
	}
	call.Message.Images[0].Content = base64.StdEncoding.EncodeToString(logo)
	call.Message.Attachments[0].Content = base64.StdEncoding.EncodeToString([]byte("Example Shop receipt\nThank you for your order.\n"))

	outbox, err := os.MkdirTemp("", "postroom-quickstart-")
	if err != nil {
		return err
	}
	dir, err := transport.NewDir(outbox)
	if err != nil {
		return err
	}
	m, err := postroom.New(dir, postroom.Options{
		Auth: postroom.StaticKeys{"quickstart": {"quickstart-key"}},
	})
	if err != nil {
		return err
	}
	results, err := m.Send(ctx, &call)
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	fmt.Println()
	fmt.Println("messages written to", outbox)
	for _, r := range results {
		if r.SendID != "" {
			fmt.Println("  ", filepath.Base(dir.File(r.SendID)), "for", r.Email)
		}
	}
	return nil
}

// logoPNG draws a small logo, so that the example carries a real image
// without a binary file in the repository.
func logoPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			c := color.RGBA{R: 0x1f, G: 0x6f, B: 0xeb, A: 0xff}
			if (x-32)*(x-32)+(y-32)*(y-32) < 18*18 {
				c = color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
