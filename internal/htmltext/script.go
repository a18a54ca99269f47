package htmltext

// scriptEnd returns the end of a script element's text that starts at i:
// the index of the '<' of its end tag, or len(src), following the rules
// for escaped and double-escaped script text ("<!--", "<script") that
// hide an end tag (Tokenizer.readScript, state by state).
func scriptEnd(src []byte, i int) int {
	n := len(src)
	var c byte
	// endTag reads "script" and the byte after it from i, after a "</":
	// done says where the text ends (an end tag, or the end of the html).
	endTag := func() (done bool, end int) {
		next, match := rawEndTag(src, i, "script")
		switch {
		case match:
			return true, i - 2
		case next < 0:
			return true, n
		}
		i = next
		return false, 0
	}

scriptData:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	if c == '<' {
		goto scriptDataLessThanSign
	}
	goto scriptData

scriptDataLessThanSign:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	switch c {
	case '/':
		goto scriptDataEndTagOpen
	case '!':
		goto scriptDataEscapeStart
	}
	i--
	goto scriptData

scriptDataEndTagOpen:
	if done, end := endTag(); done {
		return end
	}
	goto scriptData

scriptDataEscapeStart:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	if c == '-' {
		goto scriptDataEscapeStartDash
	}
	i--
	goto scriptData

scriptDataEscapeStartDash:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	if c == '-' {
		goto scriptDataEscapedDashDash
	}
	i--
	goto scriptData

scriptDataEscaped:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	switch c {
	case '-':
		goto scriptDataEscapedDash
	case '<':
		goto scriptDataEscapedLessThanSign
	}
	goto scriptDataEscaped

scriptDataEscapedDash:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	switch c {
	case '-':
		goto scriptDataEscapedDashDash
	case '<':
		goto scriptDataEscapedLessThanSign
	}
	goto scriptDataEscaped

scriptDataEscapedDashDash:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	switch c {
	case '-':
		goto scriptDataEscapedDashDash
	case '<':
		goto scriptDataEscapedLessThanSign
	case '>':
		goto scriptData
	}
	goto scriptDataEscaped

scriptDataEscapedLessThanSign:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	if c == '/' {
		goto scriptDataEscapedEndTagOpen
	}
	if isLetter(c) {
		goto scriptDataDoubleEscapeStart
	}
	i--
	goto scriptData

scriptDataEscapedEndTagOpen:
	if done, end := endTag(); done {
		return end
	}
	goto scriptDataEscaped

scriptDataDoubleEscapeStart:
	i--
	for j := 0; j < len("script"); j++ {
		if i >= n {
			return n
		}
		c = src[i]
		i++
		if c != "script"[j] && c != "SCRIPT"[j] {
			i--
			goto scriptDataEscaped
		}
	}
	if i >= n {
		return n
	}
	c = src[i]
	i++
	switch c {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		goto scriptDataDoubleEscaped
	}
	i--
	goto scriptDataEscaped

scriptDataDoubleEscaped:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedDash:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDashDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedDashDash:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDashDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	case '>':
		goto scriptData
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedLessThanSign:
	if i >= n {
		return n
	}
	c = src[i]
	i++
	if c == '/' {
		goto scriptDataDoubleEscapeEnd
	}
	i--
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapeEnd:
	{
		lt := i - 2
		next, match := rawEndTag(src, i, "script")
		switch {
		case match:
			i = lt + len("</script>")
			goto scriptDataEscaped
		case next < 0:
			return n
		}
		i = next
	}
	goto scriptDataDoubleEscaped
}
