package pgtest

import (
	"fmt"
	"net/url"
	"strings"
)

// withDatabase returns dsn with its database replaced by name. dsn is a URL
// (postgres://... or postgresql://...) or libpq's keyword=value form, where
// a dbname given last wins.
func withDatabase(dsn, name string) (string, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return strings.TrimSpace(dsn) + " dbname=" + name, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// The parse error quotes the URL, password included: not repeated.
		return "", fmt.Errorf("pgtest: %s is not a valid URL", EnvURL)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}
