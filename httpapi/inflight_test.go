package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

// TestInflightBound: past the bound on bytes in flight, a call is answered
// 503 with Retry-After at once; once the calls in flight finish, it goes
// through. Calls are held in flight by a transport that blocks until
// released, so nothing depends on timing.
func TestInflightBound(t *testing.T) {
	held, started, release := heldTransport()
	first, second := marshal(t, smallCall(1)), marshal(t, smallCall(1))
	second = bytes.Replace(second, []byte(`"k"`), []byte(`"key-2"`), 1) // a little larger: one call fills the bound
	bound := int64(len(second))
	url, _ := startHandler(t, held, postroom.Options{Concurrency: 1}, Options{MaxBodyBytes: bound, MaxInflightBytes: bound})
	send := url + "/api/1.0/message.send"

	// A refused call gives its bytes back.
	if r := post(t, t.Context(), send, "application/json", bytes.Repeat([]byte(" "), int(bound))); r.Status != http.StatusBadRequest {
		t.Fatalf("blank body: got %d %s; want 400", r.Status, r.Body)
	}

	answered := make(chan *response, 1)
	go func() {
		r, err := tryDo(t.Context(), http.MethodPost, send, "application/json", first)
		if err != nil {
			r = &response{Body: []byte(err.Error())}
		}
		answered <- r
	}()
	<-started // the first call is in flight, holding its bytes

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, send, bytes.NewReader(second))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a call past the bound got %d; want 503", resp.StatusCode)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s <= 0 {
		t.Errorf("Retry-After %q; want a number of seconds", resp.Header.Get("Retry-After"))
	}
	if r := post(t, t.Context(), send, "application/json", second); r.Status != http.StatusServiceUnavailable || r.Error.Code != "busy" {
		t.Errorf("got %d %+v; want 503 busy", r.Status, r.Error)
	}
	// The bound counts bytes: a body that fits in what is left gets in
	// (and is refused for what it is); one of unknown length counts as
	// the largest allowed.
	if r := post(t, t.Context(), send, "application/json", []byte("{}")); r.Status == http.StatusServiceUnavailable {
		t.Errorf("a 2-byte body with %d bytes left: got 503", bound-int64(len(first)))
	}
	chunked, err := http.NewRequestWithContext(t.Context(), http.MethodPost, send, io.MultiReader(strings.NewReader("{}")))
	if err != nil {
		t.Fatal(err)
	}
	chunked.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(chunked)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a chunked body while a call is in flight: got %d; want 503", resp.StatusCode)
	}

	close(release)
	if r := <-answered; r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
		t.Fatalf("the call in flight: got %d %s; want 200 sent", r.Status, r.Body)
	}
	if r := post(t, t.Context(), send, "application/json", second); r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
		t.Errorf("after release: got %d %s; want 200 sent", r.Status, r.Body)
	}
}
