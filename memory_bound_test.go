package postroom_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

// memoryChildEnv makes the test binary run the memory scenario alone and
// print its peak RSS, so that the figure is that of the scenario only.
const memoryChildEnv = "POSTROOM_MEMORY_BOUND_CHILD"

// TestMemoryBound runs eight recipients whose parts each render 8 MiB
// (from a request of about 100 KB) at the default Concurrency, in a child
// process, and checks the child's peak RSS against the documented bound,
// Concurrency x MaxMessageBytes, plus 150 MB for the runtime, the test
// binary and the call.
func TestMemoryBound(t *testing.T) {
	if os.Getenv(memoryChildEnv) == "1" {
		memoryScenario(t)
		return
	}
	if raceEnabled {
		t.Skip("the race detector multiplies memory; .ci/run runs this test without -race")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("peak RSS is read from /proc/self/status (Linux)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryBound$", "-test.count=1")
	cmd.Env = append(os.Environ(), memoryChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var peak int64 = -1
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "peak-rss-bytes "); ok {
			peak, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if peak < 0 {
		t.Fatalf("child printed no peak:\n%s", out)
	}
	bound := int64(8)*postroom.DefaultMaxMessageBytes + 150e6
	t.Logf("peak RSS %d MB, bound %d MB", peak/1e6, bound/1e6)
	if peak > bound {
		t.Errorf("peak RSS %d MB > %d MB (Concurrency x MaxMessageBytes + 150 MB)", peak/1e6, bound/1e6)
	}
}

// memoryScenario is the child's part: the call, then its VmHWM.
func memoryScenario(t *testing.T) {
	big := strings.Repeat("abcdefghij klmnopqrst uvwxyz ABCDEFGHIJ KLMNOPQRSTUVWXYZ 0123456789 ", 1600)[:100_000]
	body := strings.Repeat("{{big}}", 83) // 83 x 100 KB: about 8 MiB per part
	discard := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error { return nil })
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	call := &postroom.Call{
		Message: postroom.Message{
			FromEmail: "big@shop.example.com",
			Subject:   "big",
			HTML:      "<p>" + body + "</p>",
			Text:      body,
		},
		GlobalParams: map[string]any{"big": big},
	}
	for i := range 8 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: "r" + strconv.Itoa(i) + "@example.org"})
	}
	results, err := m.Send(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Status != postroom.StatusSent {
			t.Fatalf("%s: %s %s", r.Email, r.Status, r.Reason)
		}
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			os.Stdout.WriteString("peak-rss-bytes " + strconv.FormatInt(kb*1024, 10) + "\n")
			return
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
}
