package postroom_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/internal/testkit/testenv"
	"github.com/postroom/postroom/preview"
	"github.com/postroom/postroom/transport"
)

// documentedTypes are the types whose fields and methods README.md and
// docs/*.md name as Type.Name, by the name they are written with.
var documentedTypes = map[string]reflect.Type{
	"Options":               reflect.TypeFor[postroom.Options](),
	"postroom.Options":      reflect.TypeFor[postroom.Options](),
	"RunOptions":            reflect.TypeFor[postroom.RunOptions](),
	"PreviewOptions":        reflect.TypeFor[postroom.PreviewOptions](),
	"Mailer":                reflect.TypeFor[*postroom.Mailer](),
	"SMTPOptions":           reflect.TypeFor[transport.SMTPOptions](),
	"transport.SMTPOptions": reflect.TypeFor[transport.SMTPOptions](),
	"preview.Options":       reflect.TypeFor[preview.Options](),
	"idempotency.Options":   reflect.TypeFor[idempotency.Options](),
}

// documentedName is a Type.Name reference in Markdown: an optional
// package, the type, and the field or method.
var documentedName = regexp.MustCompile(`\b((?:[a-z]+\.)?(?:[A-Z][A-Za-z]*)?Options|Mailer)\.([A-Z][A-Za-z0-9]*)\b`)

// TestReadmeNames checks that every field or method README.md and
// docs/*.md name as Options.Name (Options, RunOptions, PreviewOptions,
// SMTPOptions, preview's and idempotency's Options) or Mailer.Name exists,
// so that the documents cannot send a reader to a field that is not
// there.
func TestReadmeNames(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, file := range append([]string{"README.md"}, files...) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			for _, m := range documentedName.FindAllStringSubmatch(line, -1) {
				typ, ok := documentedTypes[m[1]]
				if !ok {
					continue // another package's type, or prose
				}
				seen++
				_, isMethod := typ.MethodByName(m[2])
				isField := false
				if typ.Kind() == reflect.Struct {
					_, isField = typ.FieldByName(m[2])
				}
				if !isField && !isMethod {
					t.Errorf("%s:%d: %s.%s: %s has no field or method %s", file, n+1, m[1], m[2], typ, m[2])
				}
			}
		}
	}
	if seen == 0 {
		t.Error("no Options or Mailer names found in README.md and docs/: the pattern is broken")
	}
}

// The PostgreSQL set-up for development, run as written: the ```sh block
// of docs/RELIABILITY.md's "Running the tests" that runs initdb, then the block that runs the
// SQL tests against the server it starts. Two things change, so that the
// test leaves the machine as it found it and cannot collide with a server
// already running: the cluster's folder and its port are the test's own.
const (
	readmePGDir  = "/var/tmp/postroom-pg"
	readmePGPort = "5433"
)

// TestReadmePostgreSQL runs the README's PostgreSQL set-up as root (the
// README's commands are for root: runuser), checks the URL it exports
// works without a password, and runs the README's SQL test command on
// it. It skips when PostgreSQL is not installed, naming the apt-get
// command, or when not root; under CI=true it fails instead.
func TestReadmePostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL and runs the SQL tests")
	}
	// Its time goes to programs it runs: it waits beside the package's
	// other tests that run programs.
	t.Parallel()
	if bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(bins) == 0 {
		testenv.Missing(t, "PostgreSQL is not installed", "apt-get update && apt-get install -y postgresql")
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "the README's PostgreSQL set-up is written for root (runuser)", "run the tests as root")
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		testenv.Missing(t, "runuser is missing", "apt-get install -y util-linux")
	}

	var setup, check string
	for _, b := range mdBlocks(t, "docs/RELIABILITY.md") {
		switch {
		case b.lang != "sh" || b.section != "Running the tests":
		case strings.Contains(b.text, "initdb"):
			setup = b.text
		case strings.Contains(b.text, "POSTROOM_TEST_DATABASE_URL="):
			check = b.text
		}
	}
	if setup == "" || check == "" {
		t.Fatal(`docs/RELIABILITY.md: "## Running the tests" lacks the PostgreSQL set-up block (initdb) or the block running the SQL tests (POSTROOM_TEST_DATABASE_URL=)`)
	}
	for _, s := range []string{setup, check} {
		if !strings.Contains(s, readmePGPort) {
			t.Fatalf("docs/RELIABILITY.md: the PostgreSQL block does not use port %s, which this test replaces:\n%s", readmePGPort, s)
		}
	}
	if !strings.Contains(setup, readmePGDir) {
		t.Fatalf("docs/RELIABILITY.md: the PostgreSQL set-up does not use %s, which this test replaces:\n%s", readmePGDir, setup)
	}

	// The test's own folder (its parent must let the user postgres in)
	// and a free port.
	parent, err := os.MkdirTemp("", "readme-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pg")
	port := freePort(t)
	localize := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, readmePGDir, dir), readmePGPort, port)
	}

	// The set-up's lines but apt-get (the binaries are there), then the
	// URL it exported, as the check sees it.
	var script strings.Builder
	script.WriteString("set -eu\n")
	pgLine := ""
	for line := range strings.Lines(localize(setup)) {
		if strings.HasPrefix(line, "apt-get ") {
			continue
		}
		if strings.HasPrefix(line, "PG=") {
			pgLine = line
		}
		script.WriteString(line)
	}
	if pgLine == "" {
		t.Fatal("docs/RELIABILITY.md: the PostgreSQL set-up does not set PG, which its stop command uses")
	}
	t.Cleanup(func() {
		// Stop the server as the README does (fast), then remove the folder.
		stop := exec.Command("bash", "-c", pgLine+`runuser -u postgres -- "$PG/pg_ctl" -D `+dir+` -m fast stop`)
		if out, err := stop.CombinedOutput(); err != nil {
			t.Logf("stopping the server: %v\n%s", err, out)
		}
		os.RemoveAll(parent)
	})
	script.WriteString(`printf '%s\n' "$POSTROOM_DATABASE_URL"` + "\n")
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), "bash", "-c", script.String())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("the README's PostgreSQL set-up fails: %v\n%s\n%s\nserver log:\n%s", err, stdout.Bytes(), stderr.Bytes(), log)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	url := lines[len(lines)-1]
	if want := "postgres://postgres@127.0.0.1:" + port + "/postgres"; url != want {
		t.Errorf("the set-up exports POSTROOM_DATABASE_URL=%s, want %s", url, want)
	}

	// The README's SQL test command, as written but for the port, from
	// the module's root.
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run the README's SQL tests")
	}
	run := exec.CommandContext(t.Context(), "bash", "-c", "set -eu\n"+localize(check))
	run.Env = append(os.Environ(), "PATH="+filepath.Dir(gocmd)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("the README's SQL tests on its PostgreSQL fail: %v\n%s", err, out)
	}

	t.Run("two instances", func(t *testing.T) { exampleServerDemo(t, gocmd, url) })
}

// exampleServerDemo runs the two ```sh blocks of docs/EXAMPLE-SERVER.md's
// section on PostgreSQL, in one shell, on the server at url (their
// POSTROOM_DATABASE_URL): two instances of examples/httpapi sharing stored
// templates and idempotency keys. Three things change, so that the test
// writes nothing into the module and cannot collide with a server already
// running: the shell runs in a folder of its own, where a go.work names
// this module so that the program builds by its import path, and the two
// ports are free ones. It checks what the blocks' comments promise.
func exampleServerDemo(t *testing.T, gocmd, url string) {
	for _, tool := range []string{"curl", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool+" is not installed", "apt-get install -y "+map[string]string{"curl": "curl", "psql": "postgresql-client"}[tool])
		}
	}
	const section = "Stored templates and idempotency keys in PostgreSQL"
	var script strings.Builder
	for _, b := range mdBlocks(t, "docs/EXAMPLE-SERVER.md") {
		if b.lang == "sh" && b.section == section {
			script.WriteString(b.text)
		}
	}
	demo := script.String()
	for _, want := range []string{"./examples/httpapi", "8025", "8026", "kill %1 %2"} {
		if !strings.Contains(demo, want) {
			t.Fatalf("docs/EXAMPLE-SERVER.md: %q lacks %q, which this test relies on:\n%s", section, want, demo)
		}
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := append(os.Environ(),
		"PATH="+filepath.Dir(gocmd)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOWORK="+filepath.Join(dir, "go.work"),
		"POSTROOM_DATABASE_URL="+url)
	work := exec.CommandContext(t.Context(), gocmd, "work", "init", root)
	work.Dir, work.Env = dir, env
	if out, err := work.CombinedOutput(); err != nil {
		t.Fatalf("go work init: %v\n%s", err, out)
	}
	port1, port2 := freePort(t), freePort(t)
	demo = strings.NewReplacer(
		"./examples/httpapi", "github.com/postroom/postroom/examples/httpapi",
		"8025", port1, "8026", port2,
	).Replace(demo)

	// A bound for a server that never answers: the test fails instead of
	// hanging (the blocks wait for both instances to listen).
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"+demo)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docs/EXAMPLE-SERVER.md's two instances fail: %v\n%s\n%s", err, stdout.Bytes(), stderr.Bytes())
	}

	out := stdout.String()
	var results []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "[{") {
			results = append(results, line)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	switch {
	case !strings.Contains(out, "Hello Ann!") || !strings.Contains(out, "Welcome back, Ann."):
		t.Errorf("the messages do not hold the template, then the updated one:\n%s", out)
	case len(results) != 4 || !strings.Contains(results[0], `"status":"sent"`) || results[2] != results[3]:
		t.Errorf("want four results, sent, the last two (one idempotency key) the same:\n%s", out)
	case strings.TrimSpace(lines[len(lines)-1]) != "3":
		t.Errorf("want 3 messages in the outbox (the idempotent call sent once):\n%s", out)
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestReadmeDKIMRecord runs the README's DKIM key block as written but
// for the key file's folder (openssl genpkey, then cmd/dkimrecord) and
// checks the record it prints: the selector and domain of the README's
// sender, and the raw 32-byte public key of the ed25519 key made. That the
// record verifies a signed message is cmd/dkimrecord's own test.
func TestReadmeDKIMRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/dkimrecord")
	}
	// Its time goes to programs it runs: it waits beside the package's
	// other tests that run programs.
	t.Parallel()
	if _, err := exec.LookPath("openssl"); err != nil {
		testenv.Missing(t, "openssl is not installed", "apt-get update && apt-get install -y openssl")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run the README's dkimrecord command")
	}
	var block string
	for _, b := range readmeBlocks(t) {
		if b.lang == "sh" && b.section == "Deliverability" && strings.Contains(b.text, "cmd/dkimrecord") {
			block = b.text
		}
	}
	if block == "" || !strings.Contains(block, "openssl genpkey") {
		t.Fatal(`README.md: "## Deliverability" lacks the sh block that makes a key (openssl genpkey) and prints its record (cmd/dkimrecord)`)
	}
	keyFile := filepath.Join(t.TempDir(), "dkim.pem")
	run := exec.CommandContext(t.Context(), "bash", "-c", "set -eu\n"+strings.ReplaceAll(block, "dkim.pem", keyFile))
	run.Env = append(os.Environ(), "PATH="+filepath.Dir(gocmd)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("the README's DKIM key block fails: %v\n%s", err, stderr.Bytes())
	}

	data, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(data)
	if blk == nil {
		t.Fatalf("openssl wrote no PEM block: %q", data)
	}
	key, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ed, ok := key.(ed25519.PrivateKey)
	if !ok {
		t.Fatalf("the README's key is a %T, want ed25519", key)
	}
	want := `mail2026._domainkey.shop.example.com. 3600 IN TXT "v=DKIM1; k=ed25519; p=` +
		base64.StdEncoding.EncodeToString(ed.Public().(ed25519.PublicKey)) + `"` + "\n"
	if string(out) != want {
		t.Errorf("the README's dkimrecord command printed\n%s\nwant\n%s", out, want)
	}
}

// readmeSections are the README's sections a user reads, in the order
// they need them; others may sit between them.
var readmeSections = []string{"Install", "Set-up", "A short tour", "HTTP handler", "Templates", "Deliverability", "Preview", "Scaling out", "Send later"}

// TestReadmeShape checks that the README stays a users' page: under 450
// lines, its sections in readmeSections' order, and the install line and
// the two set-up commands as a newcomer types them.
func TestReadmeShape(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n >= 450 {
		t.Errorf("README.md has %d lines; keep it under 450 and move maintainer material to docs/", n)
	}
	var order []string
	for line := range strings.Lines(string(data)) {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "## "); ok {
			order = append(order, h)
		}
	}
	next := 0
	for _, h := range order {
		if next < len(readmeSections) && h == readmeSections[next] {
			next++
		}
	}
	if next < len(readmeSections) {
		t.Errorf("README.md's sections %q lack %q in the order %q", order, readmeSections[next], readmeSections)
	}
	for _, want := range []string{
		"go get github.com/postroom/postroom@latest\n",
		"\ngo run ./examples/quickstart ",
		"\ngo test -race ./... ",
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("README.md lacks the line %q", strings.TrimSpace(want))
		}
	}
}
