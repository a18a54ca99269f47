package postroom

// The text/plain alternative generated from the html, for calls that give
// html and no text: a message of html alone is what spam filters score
// against (SpamAssassin's MIME_HTML_ONLY), and a reader of plain-text
// mail sees nothing of it.

// generatesText reports whether the messages of a call with the given
// parts get a generated text part: html without text, unless
// Options.HTMLOnly.
func (m *Mailer) generatesText(hasHTML, hasText bool) bool {
	return hasHTML && !hasText && !m.opts.HTMLOnly
}

// text returns the text body of w's recipient: the rendered text, or the
// text generated from the rendered html when the call generates it, in
// w's buffer.
func (j *job) text(w *worker) []byte {
	if !j.genText {
		return w.rb.text
	}
	w.gen = w.h2t.Append(w.gen[:0], w.rb.html)
	return w.gen
}
