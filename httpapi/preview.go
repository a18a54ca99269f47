package httpapi

import (
	"net/http"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/preview"
)

// newPreview returns the preview page of m (package preview) served at
// opts.PreviewPath. The page renders calls and never sends; its calls'
// keys are checked like the API's.
func newPreview(m *postroom.Mailer, opts Options) (http.Handler, error) {
	p := opts.PreviewPath
	page, err := preview.New(m, preview.Options{MaxBodyBytes: opts.MaxBodyBytes, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	return http.StripPrefix(p[:len(p)-1], page), nil
}
