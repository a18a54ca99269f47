package main

import (
	"log/slog"
	"net/http"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/preview"
)

// previewPath is where -preview serves the preview page.
const previewPath = "/preview/"

// withPreview serves the preview page of m at /preview/ beside the API.
// The page renders calls and never sends; its calls' keys are checked
// like the API's. An application would put it behind its admin
// authentication; this example has none, so -preview shows it to whoever
// can reach the API.
func withPreview(api http.Handler, m *postroom.Mailer, maxBody int64, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(previewPath, http.StripPrefix(previewPath[:len(previewPath)-1],
		preview.New(m, preview.Options{MaxBodyBytes: maxBody, Logger: logger})))
	mux.Handle("/", api)
	return mux
}
