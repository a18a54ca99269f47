package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// The one-recipient call the obvious way, and postroom's with the files
// of each call in strings of their own, as a server decoding each request
// would have them.

// FreshCalls is the number of copies of the one-recipient call that
// OneRecipientFresh cycles through.
const FreshCalls = 32

// OneRecipientObvious measures a one-recipient call of the workload the
// obvious way: Obvious.Send with Concurrency 1 into a discarding
// transport, which parses the call's templates, decodes its images and
// attachments, renders, and writes the message with go-mail. With
// parseOnce the parsed templates are kept across calls (Obvious.ParseOnce),
// the fair match for postroom's template cache; without, every call parses
// them again. It reports what OneRecipient reports.
func OneRecipientObvious(b *testing.B, w *fixture.Workload, parseOnce bool) {
	call := fixture.PlainCall(w.Call(1))
	oneCall(b, w, func(t postroom.Transport, _ []*postroom.Call) (func(context.Context, int) error, error) {
		o := &Obvious{Transport: t, Concurrency: 1, ParseOnce: parseOnce}
		return func(ctx context.Context, _ int) error { return o.Send(ctx, call) }, nil
	})
}

// OneRecipientFresh is OneRecipient with the cache warm, each call's
// images and attachments given in strings of their own: FreshCalls copies
// of the call, made before the timer starts, whose contents are copied
// bytes (strings.Clone), sent in turn, so that no call shares a file's
// string with the call before it. (The other one-recipient benchmarks keep
// the same copies alive unsent, so that the heap is the same size.) A server that decodes a JSON request
// per call has such strings; a cache of encoded files that knew a file by
// its string's pointer would not find it, one that knows it by its content
// does.
func OneRecipientFresh(b *testing.B, w *fixture.Workload) {
	oneRecipientPostroom(b, w, true, true)
}

// freshFiles gives call new Images and Attachments slices whose contents
// are copies of the old ones' and returns it.
func freshFiles(call *postroom.Call) *postroom.Call {
	msg := &call.Message
	msg.Images = append([]postroom.Image(nil), msg.Images...)
	for i := range msg.Images {
		msg.Images[i].Content = strings.Clone(msg.Images[i].Content)
	}
	msg.Attachments = append([]postroom.Attachment(nil), msg.Attachments...)
	for i := range msg.Attachments {
		msg.Attachments[i].Content = strings.Clone(msg.Attachments[i].Content)
	}
	return call
}
