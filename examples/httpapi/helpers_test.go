package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/postroom/postroom/internal/testkit/apitest"
)

// The client side of the tests (internal/testkit/apitest), under short names.
var (
	post          = apitest.Post
	marshal       = apitest.Marshal
	smallCall     = apitest.SmallCall
	tryDo         = apitest.TryDo
	postKeyed     = apitest.PostKeyed
	mustPostKeyed = apitest.MustPostKeyed
	testLogger    = apitest.NewLogger
)

type (
	response      = apitest.Response
	keyedResponse = apitest.KeyedResponse
)

// start serves h with the production server of newHTTPServer on
// 127.0.0.1:0 and returns its base URL. The server is shut down in Cleanup.
func start(t testing.TB, h http.Handler, to timeouts, logger *slog.Logger) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, newHTTPServer(h, to, logger), ln, logger) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// startConfig builds the server of cfg with newServer and starts it.
func startConfig(t testing.TB, cfg config) (url string, log *apitest.LogRecorder) {
	t.Helper()
	logger, log := testLogger()
	if cfg.Timeouts == (timeouts{}) {
		cfg.Timeouts = defaultTimeouts
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = defaultMaxBody
	}
	if cfg.MaxInflight == 0 {
		cfg.MaxInflight = max(defaultMaxInflight, cfg.MaxBody)
	}
	h, cleanup, err := newServer(cfg, logger)
	if err != nil {
		t.Fatalf("newServer: %v", err)
	}
	t.Cleanup(func() {
		if err := cleanup(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return start(t, h, cfg.Timeouts, logger), log
}
