package main

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

// readmeShell returns the ```sh blocks of the section on running this
// program in docs/EXAMPLE-SERVER.md.
func readmeShell(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "EXAMPLE-SERVER.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var cur *strings.Builder
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.Contains(line, "examples/httpapi")
		case !in:
		case cur != nil && line == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		case line == "```sh":
			cur = &strings.Builder{}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

var (
	printfLine = regexp.MustCompile(`^printf '([^']*)' > (\S+)$`)
	curlURL    = regexp.MustCompile(`curl .*http://127\.0\.0\.1:8025(/\S+)`)
	curlHeader = regexp.MustCompile(`-H '([^:']+): ([^']*)'`)
	curlData   = regexp.MustCompile(`(?s)-d '([^']*)'`)
)

// TestReadmeCurl follows the README's set-up step (keys.json, templates,
// the server's flags) in a fresh folder and sends its curl commands'
// requests to the server so configured: each answers 200 with every
// recipient sent, and the messages are in the outbox.
func TestReadmeCurl(t *testing.T) {
	blocks := readmeShell(t)
	t.Chdir(t.TempDir())

	var args []string
	var curls []string
	for _, b := range blocks {
		switch {
		case strings.HasPrefix(b, "curl "):
			curls = append(curls, b)
		case strings.HasPrefix(b, "printf ") || strings.HasPrefix(b, "mkdir "):
			for line := range strings.Lines(b) {
				line = strings.TrimSpace(line)
				if dir, ok := strings.CutPrefix(line, "mkdir -p "); ok {
					if err := os.MkdirAll(dir, 0o700); err != nil {
						t.Fatal(err)
					}
				} else if m := printfLine.FindStringSubmatch(line); m != nil {
					if err := os.WriteFile(m[2], []byte(strings.ReplaceAll(m[1], `\n`, "\n")), 0o600); err != nil {
						t.Fatal(err)
					}
				} else if rest, ok := strings.CutPrefix(line, "go run ./examples/httpapi "); ok {
					args = strings.Fields(rest)
				} else {
					t.Fatalf("README set-up step %q: the test does not know how to run it", line)
				}
			}
		}
	}
	if args == nil || len(curls) != 2 {
		t.Fatalf("README: want a set-up step that starts the server and two curl commands; found flags %q and %d curl commands", args, len(curls))
	}
	cfg, err := parseFlags(args, func(string) string { return "" }, os.Stderr)
	if err != nil {
		t.Fatalf("README's flags %q: %v", args, err)
	}
	url, _ := startConfig(t, cfg)

	for _, c := range curls {
		path := curlURL.FindStringSubmatch(c)
		data := curlData.FindStringSubmatch(c)
		if path == nil || data == nil {
			t.Fatalf("README curl command without a URL on 127.0.0.1:8025 or -d:\n%s", c)
		}
		t.Run(strings.TrimPrefix(path[1], "/api/1.0/"), func(t *testing.T) {
			contentType := ""
			for _, h := range curlHeader.FindAllStringSubmatch(c, -1) {
				if strings.EqualFold(h[1], "Content-Type") {
					contentType = h[2]
				}
			}
			r := post(t, t.Context(), url+path[1], contentType, []byte(data[1]))
			if r.Status != http.StatusOK || len(r.Results) == 0 {
				t.Fatalf("got %d %s; want 200 with results", r.Status, r.Body)
			}
			for _, res := range r.Results {
				if res.Status != postroom.StatusSent {
					t.Errorf("%s: %s %s; want sent", res.Email, res.Status, res.Reason)
				}
				if _, err := os.Stat(filepath.Join(cfg.EMLDir, res.SendID+".eml")); err != nil {
					t.Errorf("%s: %v", res.Email, err)
				}
			}
		})
	}
}
