package bounce

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpus parses every testdata/corpus/*.eml and compares its Report
// with the .json beside it: the fields the json gives (type, send_id,
// feedback_type, reporting_mta, and per recipient address, action,
// status, hard, class), the recipients matched by address, none missing
// and none extra.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no testdata/corpus/*.eml")
	}
	for _, eml := range files {
		name := strings.TrimSuffix(filepath.Base(eml), ".eml")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(eml, ".eml") + ".json")
			if err != nil {
				t.Fatalf("expected outcome: %v", err)
			}
			f, err := os.Open(eml)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep, err := Parse(f)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, p := range compareReport(rep, want) {
				t.Error(p)
			}
		})
	}
}

// compareReport returns the differences between rep and the expected
// outcome want (a subset of the Report JSON): one line each.
func compareReport(rep *Report, want []byte) []string {
	var exp map[string]json.RawMessage
	if err := json.Unmarshal(want, &exp); err != nil {
		return []string{"expected outcome: " + err.Error()}
	}
	got, _ := json.Marshal(rep)
	var have map[string]json.RawMessage
	_ = json.Unmarshal(got, &have)
	var probs []string
	for _, k := range []string{"type", "send_id", "feedback_type", "reporting_mta"} {
		if w, ok := exp[k]; ok && !jsonEqual(w, have[k]) {
			probs = append(probs, fmt.Sprintf("%s: got %s, want %s", k, orNone(have[k]), w))
		}
	}
	raw, ok := exp["recipients"]
	if !ok {
		return probs
	}
	var wantRecips []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wantRecips); err != nil {
		return append(probs, "expected recipients: "+err.Error())
	}
	var haveRecips []map[string]json.RawMessage
	_ = json.Unmarshal(have["recipients"], &haveRecips)
	used := make([]bool, len(haveRecips))
	for _, w := range wantRecips {
		var addr string
		_ = json.Unmarshal(w["address"], &addr)
		found := -1
		for i, h := range haveRecips {
			var a string
			_ = json.Unmarshal(h["address"], &a)
			if !used[i] && strings.EqualFold(a, addr) {
				found = i
				break
			}
		}
		if found < 0 {
			probs = append(probs, fmt.Sprintf("recipient %s: missing (got %s)", addr, have["recipients"]))
			continue
		}
		used[found] = true
		for _, k := range []string{"action", "status", "hard", "class", "remote_mta"} {
			if v, ok := w[k]; ok && !jsonEqual(v, haveRecips[found][k]) {
				probs = append(probs, fmt.Sprintf("recipient %s: %s: got %s, want %s (diagnostic %s)",
					addr, k, orNone(haveRecips[found][k]), v, haveRecips[found]["diagnostic"]))
			}
		}
	}
	for i, h := range haveRecips {
		if !used[i] {
			probs = append(probs, fmt.Sprintf("extra recipient %s %s", h["address"], h["action"]))
		}
	}
	return probs
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

func orNone(r json.RawMessage) string {
	if len(r) == 0 {
		return "(none)"
	}
	return string(r)
}
