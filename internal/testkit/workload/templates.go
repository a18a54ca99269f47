package workload

// The message's templates: an order confirmation in the style of a
// transactional e-mail, with 20 mustaches in the html (values in text and in
// attributes, one {{#if vip}}…{{else}}…{{/if}}, one {{#each items}}), 8 in
// the text and 2 in the subject.

const subject = "Your order #{{order_id}} is confirmed, {{first_name}}"

const html = `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0" />
<title>{{company_name}} order confirmation</title>
<style type="text/css">
  body { margin: 0; padding: 0; -webkit-text-size-adjust: 100%; -ms-text-size-adjust: 100%; background-color: #f4f4f7; }
  table { border-collapse: collapse; mso-table-lspace: 0pt; mso-table-rspace: 0pt; }
  img { border: 0; height: auto; line-height: 100%; outline: none; text-decoration: none; -ms-interpolation-mode: bicubic; }
  a { color: #3869d4; text-decoration: underline; }
  .wrapper { width: 100%; margin: 0; padding: 0; background-color: #f4f4f7; }
  .body { width: 100%; margin: 0; padding: 0; border-top: 1px solid #edeff2; border-bottom: 1px solid #edeff2; background-color: #ffffff; }
  .inner-body { width: 570px; margin: 0 auto; padding: 0; background-color: #ffffff; }
  .content-cell { padding: 35px; }
  .footer { width: 570px; margin: 0 auto; padding: 0; text-align: center; }
  .purchase { width: 100%; margin: 0; padding: 35px 0; }
  .purchase_item { padding: 10px 0; color: #74787e; font-size: 15px; line-height: 18px; }
  .purchase_heading { padding-bottom: 8px; border-bottom: 1px solid #edeff2; }
  .purchase_total { margin: 0; text-align: right; font-weight: bold; color: #2f3133; }
  .button { display: inline-block; width: 200px; background-color: #3869d4; border-radius: 3px; color: #ffffff; font-size: 15px; line-height: 45px; text-align: center; text-decoration: none; -webkit-text-size-adjust: none; mso-hide: all; }
  .button--green { background-color: #22bc66; }
  h1 { margin-top: 0; color: #2f3133; font-size: 19px; font-weight: bold; text-align: left; }
  p { margin-top: 0; color: #74787e; font-size: 16px; line-height: 1.5em; text-align: left; }
  p.sub { font-size: 12px; }
  @media only screen and (max-width: 600px) { .inner-body, .footer { width: 100% !important; } }
</style>
</head>
<body style="margin:0;padding:0;background-color:#f4f4f7;font-family:Arial,'Helvetica Neue',Helvetica,sans-serif;">
<table class="wrapper" width="100%" cellpadding="0" cellspacing="0" role="presentation">
  <tr>
    <td align="center">
      <table class="content" width="100%" cellpadding="0" cellspacing="0" role="presentation">
        <tr>
          <td class="masthead">
            <a href="https://shop.example.com/" style="color:#bbbfc3;font-size:16px;font-weight:bold;text-decoration:none;"><img src="cid:logo@anchors" width="160" height="48" alt="{{company_name}}" style="display:block;border:0;" /></a>
          </td>
        </tr>
        <tr>
          <td class="body" width="100%" cellpadding="0" cellspacing="0">
            <table class="inner-body" align="center" width="570" cellpadding="0" cellspacing="0" role="presentation">
              <tr>
                <td class="content-cell">
                  <h1>Hi {{first_name}},</h1>
                  <p>Thanks for shopping with us. We have received your order <strong>#{{order_id}}</strong> and it is now being prepared for shipment. You will receive another e-mail with tracking details as soon as your parcel leaves our warehouse. This is a confirmation only; no action is required on your part.</p>
                  {{#if vip}}
                  <table class="attributes" width="100%" cellpadding="0" cellspacing="0" role="presentation">
                    <tr><td class="attributes_content"><p style="margin:0;">As a member of our loyalty programme you get <strong>free express shipping</strong> on this order and every order over the next twelve months. Thank you for being with us.</p></td></tr>
                  </table>
                  {{else}}
                  <p>Join our loyalty programme today to get free express shipping on every order for the next twelve months, early access to sales and a birthday surprise.</p>
                  {{/if}}
                  <table class="purchase" width="100%" cellpadding="0" cellspacing="0" role="presentation">
                    <tr>
                      <td><h2>Order summary</h2></td>
                      <td class="align-right"><a href="{{site_url}}/orders/{{order_id}}?utm_source=email&amp;utm_medium=transactional" class="button button--green" target="_blank">View your order</a></td>
                    </tr>
                    <tr>
                      <td colspan="2">
                        <table class="purchase_content" width="100%" cellpadding="0" cellspacing="0" role="presentation">
                          <tr>
                            <th class="purchase_heading" align="left"><p>Description</p></th>
                            <th class="purchase_heading" align="right"><p>Qty</p></th>
                            <th class="purchase_heading" align="right"><p>Amount</p></th>
                          </tr>
                          {{#each items}}
                          <tr>
                            <td width="70%" class="purchase_item"><span style="font-size:15px;color:#74787e;">{{name}}</span></td>
                            <td width="10%" class="purchase_item align-right"><span style="font-size:15px;color:#74787e;">{{qty}}</span></td>
                            <td width="20%" class="purchase_item align-right"><span style="font-size:15px;color:#74787e;">{{price}}</span></td>
                          </tr>
                          {{/each}}
                          <tr>
                            <td width="80%" class="purchase_footer" valign="middle" colspan="2"><p class="purchase_total purchase_total--label">Total</p></td>
                            <td width="20%" class="purchase_footer" valign="middle"><p class="purchase_total">{{total}}</p></td>
                          </tr>
                        </table>
                      </td>
                    </tr>
                  </table>
                  <img src="cid:banner@anchors" width="570" height="120" alt="Seasonal offers" style="display:block;border:0;margin:0 0 21px;" />
                  <p>If you have any questions about this order, simply reply to this e-mail or reach out to our <a href="mailto:{{support_email}}">support team</a> for help. Our team is available around the clock, seven days a week, and typically answers within a couple of hours.</p>
                  <p>Returns are free within 30 days of delivery. Items must be unused and in their original packaging; the full returns policy, including exceptions for personalised goods and gift cards, is available in the help centre on our website.</p>
                  <p>Cheers,<br />The team</p>
                  <table class="body-sub" role="presentation">
                    <tr>
                      <td>
                        <p class="sub">If you're having trouble with the button above, copy and paste the URL below into your web browser.</p>
                        <p class="sub">https://shop.example.com/orders/</p>
                      </td>
                    </tr>
                  </table>
                </td>
              </tr>
            </table>
          </td>
        </tr>
        <tr>
          <td>
            <table class="footer" align="center" width="570" cellpadding="0" cellspacing="0" role="presentation">
              <tr>
                <td class="content-cell" align="center">
                  <p class="sub align-center">&copy; {{year}} {{company_name}}. All rights reserved.</p>
                  <p class="sub align-center">You are receiving this e-mail because you placed an order on our website. This is a transactional message and is sent even if you opted out of marketing e-mail.</p>
                  <p class="sub align-center">1234 Street Rd., Suite 1234, Springfield, 12345, Country</p>
                  <p class="sub align-center"><a href="{{unsubscribe_url}}?o={{order_id}}" style="color:#aeaeae;">Manage e-mail preferences</a></p>
                </td>
              </tr>
            </table>
          </td>
        </tr>
      </table>
    </td>
  </tr>
</table>
</body>
</html>
`

const text = `Hi {{first_name}},

Thanks for shopping with us. We have received your order #{{order_id}}
and it is now being prepared for shipment. You will receive another
e-mail with tracking details as soon as your parcel leaves our
warehouse. This is a confirmation only; no action is required on your
part.

View your order: {{site_url}}/orders/{{order_id}}

Order total: {{total}}

Returns are free within 30 days of delivery. Items must be unused and
in their original packaging; the full returns policy, including
exceptions for personalised goods and gift cards, is available in the
help centre on our website.

If you have any questions about this order, simply reply to this
e-mail or reach out to our support team at {{support_email}}. Our team
is available around the clock, seven days a week, and typically
answers within a couple of hours.

Shipping: standard parcels usually arrive within 3-5 business days;
express parcels within 1-2 business days. Delivery estimates are based
on the shipping method selected at checkout and the destination
address; remote areas may take longer. Orders placed on weekends or
public holidays are processed on the next business day.

Gift wrapping and personal notes can be added until the parcel is
handed to the carrier: open the order in your account and choose
"Add a gift note". If you ordered several items, they may arrive in
separate parcels; each parcel gets its own tracking number, and you
will not be charged extra shipping for a split delivery.

Prices include VAT where applicable. Your invoice is attached to this
e-mail as a PDF; you can also download it at any time from your
account page.

Cheers,
The team

--
You are receiving this e-mail because you placed an order on our
website. This is a transactional message and is sent even if you
opted out of marketing e-mail.

1234 Street Rd., Suite 1234, Springfield, 12345, Country
(c) {{company_name}}. All rights reserved.

Manage e-mail preferences: {{unsubscribe_url}}
`
