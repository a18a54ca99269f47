package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/program"
	"github.com/postroom/postroom/internal/workload"
)

// ModulePath is the module whose repository the workload sits beside:
// FindRoot looks for the go.mod that declares it.
const ModulePath = workload.Module

// WorkloadFromRoot is the shared workload's path relative to the repository
// root, slash-separated.
const WorkloadFromRoot = workload.FromRoot

// FindWorkload returns the path of the shared workload: it walks up from
// dir to the repository root (the directory whose go.mod declares
// ModulePath) and joins WorkloadFromRoot. It returns an error when no such
// root is found above dir. The file itself is not opened. It only reads
// files and is safe for concurrent use.
func FindWorkload(dir string) (string, error) {
	return workload.PathFrom(dir)
}

// FindRoot returns the repository root at or above dir: the first directory
// whose go.mod declares ModulePath. It only reads files and is safe for
// concurrent use.
func FindRoot(dir string) (string, error) {
	return workload.Root(dir)
}

// Workload is the shared benchmark workload: a message.send call body with
// its sample recipients. Load reads one; Call and StaticCall make calls of
// any size from it, as the workload's README says.
//
// A Workload is read-only after Load and safe for concurrent use. The calls
// it returns share its params maps and strings, which nothing may modify
// (postroom never does); each call has its own Recipients slice. The zero
// value has no samples and makes calls with no recipients.
type Workload struct {
	// Base is the call as read, with the sample recipients.
	Base postroom.Call
}

// Load reads the workload at path and returns a new Workload, owned by the
// caller. It fails when the file cannot be read or decoded or has no sample
// recipient.
func Load(path string) (*Workload, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("benchmarks: reading the workload: %w", err)
	}
	return decode(b, path)
}

// Shared returns a new Workload, owned by the caller, read from the shared
// workload beside the repository found from the current directory (for a
// test, its package's directory). It fails tb when the file cannot be
// found, read or decoded or has no sample recipient. Tests anywhere in the
// module use it to make calls from the workload:
//
//	call := benchmarks.Shared(t).Call(16)
func Shared(tb testing.TB) *Workload {
	tb.Helper()
	w, err := decode(workload.Read(tb), workload.FromRoot)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// decode decodes the workload b, read from name.
func decode(b []byte, name string) (*Workload, error) {
	w := &Workload{}
	if err := json.Unmarshal(b, &w.Base); err != nil {
		return nil, fmt.Errorf("benchmarks: decoding the workload %s: %w", name, err)
	}
	if len(w.Base.Recipients) == 0 {
		return nil, fmt.Errorf("benchmarks: the workload %s has no sample recipients", name)
	}
	return w, nil
}

// Samples is the number of sample recipients.
func (w *Workload) Samples() int { return len(w.Base.Recipients) }

// Recipient returns recipient i of a call made from w: the name and params
// of sample i mod Samples() and the address user%06d@example.org.
func (w *Workload) Recipient(i int) postroom.Recipient {
	s := w.Base.Recipients[i%len(w.Base.Recipients)]
	return postroom.Recipient{Email: workload.Address(i), Name: s.Name, Params: s.Params}
}

// Call returns the workload's call with n recipients (see Recipient). The
// call is a shallow copy of Base with a new Recipients slice.
func (w *Workload) Call(n int) *postroom.Call {
	c := w.Base
	c.Recipients = make([]postroom.Recipient, n)
	for i := range c.Recipients {
		c.Recipients[i] = w.Recipient(i)
	}
	return &c
}

// StaticCall returns Call(n) with the subject, html and text replaced by
// what they render to for sample 0: a call with no placeholder left, whose
// sending costs MIME and the Mailer's own work but no template rendering.
// It fails if a part still has a placeholder after rendering.
func (w *Workload) StaticCall(n int) (*postroom.Call, error) {
	parts, err := w.Rendered(0)
	if err != nil {
		return nil, err
	}
	c := w.Call(n)
	c.Message.Subject, c.Message.HTML, c.Message.Text = parts.Subject, parts.HTML, parts.Text
	for _, p := range []struct {
		name, src string
		mode      program.Mode
	}{{"subject", parts.Subject, program.Text}, {"html", parts.HTML, program.HTML}, {"text", parts.Text, program.Text}} {
		prog, err := program.Compile(context.Background(), p.src, program.Options{Mode: p.mode})
		if err != nil {
			return nil, fmt.Errorf("benchmarks: the rendered %s is not a valid template: %w", p.name, err)
		}
		if _, static := prog.Static(); !static {
			return nil, fmt.Errorf("benchmarks: the rendered %s still has placeholders", p.name)
		}
	}
	return c, nil
}

// Parts are one recipient's rendered subject and bodies. The zero value is
// three empty parts. A Parts is a plain value: copies are independent.
type Parts struct {
	Subject, HTML, Text string
}

// Rendered returns what the workload's subject, html and text render to for
// sample i, with postroom's program: html escaped, subject and text not.
func (w *Workload) Rendered(i int) (Parts, error) {
	r := w.Base.Recipients[i%len(w.Base.Recipients)]
	d := &program.Data{Params: r.Params, Globals: w.Base.GlobalParams}
	var out [3]string
	for k, p := range []struct {
		src  string
		mode program.Mode
	}{{w.Base.Message.Subject, program.Text}, {w.Base.Message.HTML, program.HTML}, {w.Base.Message.Text, program.Text}} {
		prog, err := program.Compile(context.Background(), p.src, program.Options{Mode: p.mode})
		if err != nil {
			return Parts{}, fmt.Errorf("benchmarks: compiling the workload: %w", err)
		}
		b, err := prog.Append(context.Background(), nil, d)
		if err != nil {
			return Parts{}, fmt.Errorf("benchmarks: rendering the workload: %w", err)
		}
		if len(d.Missing) > 0 {
			return Parts{}, fmt.Errorf("benchmarks: sample %d has no value for %s", i, strings.Join(d.Missing, ", "))
		}
		out[k] = string(b)
	}
	return Parts{Subject: out[0], HTML: out[1], Text: out[2]}, nil
}
