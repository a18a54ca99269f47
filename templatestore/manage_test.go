package templatestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

var (
	_ templatestore.Manager = (*templatestore.Memory)(nil)
	_ templatestore.Manager = (*templatestore.SQL)(nil)
)

// newManager returns an empty Manager of the implementation under test,
// keeping keep versions (0: the default).
type newManager func(t *testing.T, keep int) templatestore.Manager

// managerContract is what every Manager does, run against Memory and SQL (on each engine).
var managerContract = []struct {
	name string
	test func(t *testing.T, newStore newManager)
}{
	{"Lifecycle", testLifecycle},
	{"Missing", testMissing},
	{"Accounts", testAccounts},
	{"KeepVersions", testKeepVersions},
	{"PublishUnchanged", testPublishUnchanged},
	{"Refused", testManagerRefused},
	{"RemoveAndAddAgain", testRemoveAndAddAgain},
	{"List", testList},
	{"Put", testPut},
	{"ConcurrentPublish", testConcurrentPublish},
	{"Canceled", testManagerCanceled},
	{"MailerUsesPublished", testMailerUsesPublished},
}

func TestMemoryManager(t *testing.T) {
	for _, c := range managerContract {
		t.Run(c.name, func(t *testing.T) {
			c.test(t, func(t *testing.T, keep int) templatestore.Manager {
				return &templatestore.Memory{KeepVersions: keep}
			})
		})
	}
}

func TestSQLManager(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			for _, c := range managerContract {
				t.Run(c.name, func(t *testing.T) {
					c.test(t, func(t *testing.T, keep int) templatestore.Manager {
						db := e.Open(t)
						if err := templatestore.Migrate(t.Context(), db); err != nil {
							t.Fatalf("Migrate: %v", err)
						}
						return &templatestore.SQL{DB: db, KeepVersions: keep}
					})
				})
			}
		})
	}
}

// must returns a function that fails the test on its error and returns
// its template: must(t)(s.Add(...)).
func must(t *testing.T) func(*templatestore.Template, error) *templatestore.Template {
	return func(tpl *templatestore.Template, err error) *templatestore.Template {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if tpl == nil {
			t.Fatal("nil template and nil error")
		}
		return tpl
	}
}

// live checks the source a call would get for acme's id.
func live(t *testing.T, s templatestore.Manager, account, id, want string) {
	t.Helper()
	got, err := s.Template(t.Context(), account, id)
	switch {
	case want == "" && !errors.Is(err, postroom.ErrTemplateNotFound):
		t.Fatalf("Template(%s, %s) = %q, %v; want ErrTemplateNotFound", account, id, got, err)
	case want != "" && (err != nil || got != want):
		t.Fatalf("Template(%s, %s) = %q, %v; want %q", account, id, got, err, want)
	}
}

// numbers returns the version numbers of vs, and their From.
func numbers(vs []templatestore.Version) (n, from []int) {
	for _, v := range vs {
		n, from = append(n, v.Version), append(from, v.From)
	}
	return n, from
}

func testLifecycle(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	tpl := must(t)(s.Add(ctx, "acme", "welcome", "v1 {{name}}", false))
	if tpl.Draft != "v1 {{name}}" || tpl.Published != nil || tpl.AccountID != "acme" || tpl.ID != "welcome" || tpl.Created.IsZero() {
		t.Fatalf("Add, not published: %+v", tpl)
	}
	live(t, s, "acme", "welcome", "") // a draft is not sent

	tpl = must(t)(s.Publish(ctx, "acme", "welcome"))
	if tpl.Published == nil || tpl.Published.Version != 1 || tpl.Published.Source != "v1 {{name}}" || tpl.Published.Published.IsZero() {
		t.Fatalf("Publish: %+v", tpl)
	}
	live(t, s, "acme", "welcome", "v1 {{name}}")

	tpl = must(t)(s.Update(ctx, "acme", "welcome", "v2 {{name}}", false))
	if tpl.Draft != "v2 {{name}}" || tpl.Published.Version != 1 {
		t.Fatalf("Update, not published: %+v", tpl)
	}
	live(t, s, "acme", "welcome", "v1 {{name}}") // calls keep the live one

	must(t)(s.Publish(ctx, "acme", "welcome"))
	live(t, s, "acme", "welcome", "v2 {{name}}")

	tpl = must(t)(s.PublishVersion(ctx, "acme", "welcome", 1))
	if tpl.Published.Version != 3 || tpl.Published.From != 1 || tpl.Published.Source != "v1 {{name}}" || tpl.Draft != "v2 {{name}}" {
		t.Fatalf("PublishVersion(1): %+v", tpl)
	}
	live(t, s, "acme", "welcome", "v1 {{name}}")

	tpl = must(t)(s.Update(ctx, "acme", "welcome", "v4", true))
	live(t, s, "acme", "welcome", "v4")
	if tpl.Published.Version != 4 || tpl.Draft != "v4" || tpl.Versions != nil {
		t.Fatalf("Update, published: %+v", tpl)
	}

	info := must(t)(s.Info(ctx, "acme", "welcome"))
	n, from := numbers(info.Versions)
	if !slices.Equal(n, []int{4, 3, 2, 1}) || !slices.Equal(from, []int{0, 1, 0, 0}) || info.Versions[3].Source != "v1 {{name}}" || *info.Published != info.Versions[0] {
		t.Fatalf("Info: versions %v from %v: %+v", n, from, info)
	}
	if info.Updated.Before(info.Created) {
		t.Errorf("Info: updated %v before created %v", info.Updated, info.Created)
	}
}

func testMissing(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	must(t)(s.Add(ctx, "acme", "welcome", "hi", true))
	if _, err := s.Add(ctx, "acme", "welcome", "other", true); !errors.Is(err, templatestore.ErrExists) {
		t.Errorf("Add of a stored id: %v, want ErrExists", err)
	}
	live(t, s, "acme", "welcome", "hi")
	for name, f := range map[string]func() (*templatestore.Template, error){
		"Update":         func() (*templatestore.Template, error) { return s.Update(ctx, "acme", "nope", "x", true) },
		"Publish":        func() (*templatestore.Template, error) { return s.Publish(ctx, "acme", "nope") },
		"PublishVersion": func() (*templatestore.Template, error) { return s.PublishVersion(ctx, "acme", "nope", 1) },
		"Remove":         func() (*templatestore.Template, error) { return s.Remove(ctx, "acme", "nope") },
		"Info":           func() (*templatestore.Template, error) { return s.Info(ctx, "acme", "nope") },
	} {
		if tpl, err := f(); !errors.Is(err, postroom.ErrTemplateNotFound) || tpl != nil {
			t.Errorf("%s of a missing template: %+v, %v; want ErrTemplateNotFound", name, tpl, err)
		}
	}
	for _, v := range []int{0, 2, -1} {
		if _, err := s.PublishVersion(ctx, "acme", "welcome", v); !errors.Is(err, templatestore.ErrVersionNotFound) || errors.Is(err, postroom.ErrTemplateNotFound) {
			t.Errorf("PublishVersion(%d): %v, want ErrVersionNotFound", v, err)
		}
	}
	if info := must(t)(s.Info(ctx, "acme", "welcome")); len(info.Versions) != 1 {
		t.Errorf("after refused changes: %+v", info)
	}
}

func testAccounts(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	must(t)(s.Add(ctx, "acme", "welcome", "acme's", true))
	must(t)(s.Add(ctx, "acme", "secret", "acme's secret", true))
	// Every method, from another account, finds nothing of acme's.
	for name, f := range map[string]func() (*templatestore.Template, error){
		"Update":         func() (*templatestore.Template, error) { return s.Update(ctx, "other", "secret", "x", true) },
		"Publish":        func() (*templatestore.Template, error) { return s.Publish(ctx, "other", "secret") },
		"PublishVersion": func() (*templatestore.Template, error) { return s.PublishVersion(ctx, "other", "secret", 1) },
		"Remove":         func() (*templatestore.Template, error) { return s.Remove(ctx, "other", "secret") },
		"Info":           func() (*templatestore.Template, error) { return s.Info(ctx, "other", "secret") },
	} {
		if _, err := f(); !errors.Is(err, postroom.ErrTemplateNotFound) {
			t.Errorf("%s from another account: %v, want ErrTemplateNotFound", name, err)
		}
	}
	live(t, s, "other", "secret", "")
	if list, err := s.List(ctx, "other"); err != nil || len(list) != 0 {
		t.Errorf("List of another account: %+v, %v", list, err)
	}
	// The same id in another account is another template.
	must(t)(s.Add(ctx, "other", "welcome", "other's", false))
	must(t)(s.Update(ctx, "other", "welcome", "other's 2", true))
	live(t, s, "acme", "welcome", "acme's")
	live(t, s, "other", "welcome", "other's 2")
	must(t)(s.Remove(ctx, "other", "welcome"))
	live(t, s, "acme", "welcome", "acme's")
	if info := must(t)(s.Info(ctx, "acme", "secret")); info.Draft != "acme's secret" {
		t.Errorf("acme's secret after the other account's changes: %+v", info)
	}
}

func testKeepVersions(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 3), t.Context()
	must(t)(s.Add(ctx, "acme", "t", "s1", true))
	for i := 2; i <= 5; i++ {
		must(t)(s.Update(ctx, "acme", "t", fmt.Sprintf("s%d", i), true))
	}
	info := must(t)(s.Info(ctx, "acme", "t"))
	if n, _ := numbers(info.Versions); !slices.Equal(n, []int{5, 4, 3}) {
		t.Fatalf("kept %v, want [5 4 3]", n)
	}
	if _, err := s.PublishVersion(ctx, "acme", "t", 2); !errors.Is(err, templatestore.ErrVersionNotFound) {
		t.Errorf("PublishVersion of a forgotten version: %v", err)
	}
	tpl := must(t)(s.PublishVersion(ctx, "acme", "t", 3))
	if tpl.Published.Version != 6 || tpl.Published.Source != "s3" {
		t.Errorf("PublishVersion(3): %+v", tpl.Published)
	}
	info = must(t)(s.Info(ctx, "acme", "t"))
	if n, _ := numbers(info.Versions); !slices.Equal(n, []int{6, 5, 4}) {
		t.Errorf("kept %v, want [6 5 4]", n)
	}

	// The default keeps DefaultKeepVersions.
	d := newStore(t, 0)
	for i := 1; i <= templatestore.DefaultKeepVersions+2; i++ {
		put(t, d, "acme", "t", fmt.Sprintf("s%d", i))
	}
	info = must(t)(d.Info(ctx, "acme", "t"))
	if len(info.Versions) != templatestore.DefaultKeepVersions || info.Versions[len(info.Versions)-1].Version != 3 {
		t.Errorf("default: kept %d versions, the oldest %+v", len(info.Versions), info.Versions[len(info.Versions)-1])
	}
}

func testPublishUnchanged(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	must(t)(s.Add(ctx, "acme", "t", "a", true))
	must(t)(s.Publish(ctx, "acme", "t"))
	must(t)(s.Update(ctx, "acme", "t", "a", true))
	must(t)(s.PublishVersion(ctx, "acme", "t", 1))
	if info := must(t)(s.Info(ctx, "acme", "t")); len(info.Versions) != 1 {
		t.Errorf("publishing the live source again made versions: %+v", info.Versions)
	}
}

func testManagerRefused(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	for _, tc := range []struct {
		name, account, id, source string
		want                      error
	}{
		{"empty_account", "", "t", "x", templatestore.ErrInvalidID},
		{"bad_account", "../x", "t", "x", templatestore.ErrInvalidID},
		{"bad_id", "acme", "a/b", "x", templatestore.ErrInvalidID},
		{"dotdot_id", "acme", "..", "x", templatestore.ErrInvalidID},
		{"empty_source", "acme", "t", "", templatestore.ErrInvalidSource},
		{"nul", "acme", "t", "a\x00b", templatestore.ErrInvalidSource},
		{"not_utf8", "acme", "t", "a\xffb", templatestore.ErrInvalidSource},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Add(ctx, tc.account, tc.id, tc.source, true); !errors.Is(err, tc.want) {
				t.Errorf("Add: %v, want %v", err, tc.want)
			}
			if tc.want == templatestore.ErrInvalidID {
				if _, err := s.Info(ctx, tc.account, tc.id); !errors.Is(err, tc.want) || !errors.Is(err, postroom.ErrTemplateNotFound) {
					t.Errorf("Info: %v, want %v", err, tc.want)
				}
			}
		})
	}
	must(t)(s.Add(ctx, "acme", "t", "ok", true))
	if _, err := s.Update(ctx, "acme", "t", "", true); !errors.Is(err, templatestore.ErrInvalidSource) {
		t.Errorf("Update with an empty source: %v", err)
	}
	if _, err := s.List(ctx, "../x"); !errors.Is(err, templatestore.ErrInvalidID) {
		t.Errorf("List of an invalid account: %v", err)
	}
	live(t, s, "acme", "t", "ok")
}

func testRemoveAndAddAgain(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	must(t)(s.Add(ctx, "acme", "t", "a", true))
	must(t)(s.Update(ctx, "acme", "t", "b", true))
	gone := must(t)(s.Remove(ctx, "acme", "t"))
	if n, _ := numbers(gone.Versions); gone.Draft != "b" || !slices.Equal(n, []int{2, 1}) {
		t.Errorf("Remove returned %+v", gone)
	}
	live(t, s, "acme", "t", "")
	if _, err := s.Remove(ctx, "acme", "t"); !errors.Is(err, postroom.ErrTemplateNotFound) {
		t.Errorf("second Remove: %v", err)
	}
	tpl := must(t)(s.Add(ctx, "acme", "t", "c", true))
	if tpl.Published.Version != 1 {
		t.Errorf("added again: %+v, want version 1", tpl.Published)
	}
}

func testList(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	if list, err := s.List(ctx, "acme"); err != nil || len(list) != 0 {
		t.Fatalf("empty List: %+v, %v", list, err)
	}
	for _, id := range []string{"b", "A", "a.txt", "a-1", "a"} {
		must(t)(s.Add(ctx, "acme", id, "src "+id, id != "b"))
	}
	must(t)(s.Update(ctx, "acme", "a", "src a 2", true))
	must(t)(s.Add(ctx, "other", "c", "src c", true))
	list, err := s.List(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tpl := range list {
		ids = append(ids, tpl.ID)
		if tpl.Versions != nil || tpl.AccountID != "acme" {
			t.Errorf("List entry %+v", tpl)
		}
	}
	if !slices.Equal(ids, []string{"A", "a", "a-1", "a.txt", "b"}) {
		t.Fatalf("List ids %v, want byte order", ids)
	}
	if a := list[1]; a.Draft != "src a 2" || a.Published == nil || a.Published.Version != 2 || a.Published.Source != "src a 2" {
		t.Errorf("List a: %+v", a)
	}
	if b := list[4]; b.Draft != "src b" || b.Published != nil {
		t.Errorf("List b (never published): %+v", b)
	}
}

// put is the Put of Memory and SQL, which predate Manager.
func put(t *testing.T, s templatestore.Manager, account, id, source string) {
	t.Helper()
	var err error
	switch s := s.(type) {
	case *templatestore.Memory:
		err = s.Put(account, id, source)
	case *templatestore.SQL:
		err = s.Put(t.Context(), account, id, source)
	default:
		t.Fatalf("no Put on %T", s)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// testPut: Put, as before Manager, stores a template calls use at once; it
// is now its draft and a published version.
func testPut(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	put(t, s, "acme", "t", "one")
	live(t, s, "acme", "t", "one")
	put(t, s, "acme", "t", "two")
	put(t, s, "acme", "t", "two")
	live(t, s, "acme", "t", "two")
	info := must(t)(s.Info(ctx, "acme", "t"))
	if n, _ := numbers(info.Versions); info.Draft != "two" || !slices.Equal(n, []int{2, 1}) {
		t.Errorf("after Put: %+v", info)
	}
	must(t)(s.PublishVersion(ctx, "acme", "t", 1))
	live(t, s, "acme", "t", "one")
}

// testConcurrentPublish: publishes racing on one template each get their
// own version, numbered without a gap or a repeat, and the live version
// is the newest.
func testConcurrentPublish(t *testing.T, newStore newManager) {
	const n = 12
	s, ctx := newStore(t, n+1), t.Context()
	must(t)(s.Add(ctx, "acme", "t", "start", true))
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.Update(ctx, "acme", "t", fmt.Sprintf("writer %d", i), true)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	info := must(t)(s.Info(ctx, "acme", "t"))
	got, _ := numbers(info.Versions)
	want := make([]int, n+1)
	for i := range want {
		want[i] = n + 1 - i
	}
	if !slices.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	sources := map[string]bool{}
	for _, v := range info.Versions {
		sources[v.Source] = true
	}
	if len(sources) != n+1 {
		t.Errorf("a source was published twice or lost: %v", sources)
	}
	live(t, s, "acme", "t", info.Versions[0].Source)
}

func testManagerCanceled(t *testing.T, newStore newManager) {
	s := newStore(t, 0)
	must(t)(s.Add(t.Context(), "acme", "t", "a", true))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, f := range map[string]func() error{
		"Add":            func() error { _, err := s.Add(ctx, "acme", "u", "x", true); return err },
		"Update":         func() error { _, err := s.Update(ctx, "acme", "t", "x", true); return err },
		"Publish":        func() error { _, err := s.Publish(ctx, "acme", "t"); return err },
		"PublishVersion": func() error { _, err := s.PublishVersion(ctx, "acme", "t", 1); return err },
		"Remove":         func() error { _, err := s.Remove(ctx, "acme", "t"); return err },
		"Info":           func() error { _, err := s.Info(ctx, "acme", "t"); return err },
		"List":           func() error { _, err := s.List(ctx, "acme"); return err },
		"Template":       func() error { _, err := s.Template(ctx, "acme", "t"); return err },
	} {
		if err := f(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done ctx: %v", name, err)
		}
	}
	live(t, s, "acme", "t", "a")
}

// testMailerUsesPublished: a Mailer over the store sends the live
// version, and finds no template that was never published.
func testMailerUsesPublished(t *testing.T, newStore newManager) {
	s, ctx := newStore(t, 0), t.Context()
	tr := transport.NewMemory()
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Templates: s})
	if err != nil {
		t.Fatal(err)
	}
	call := &postroom.Call{AccountID: "acme", Message: postroom.Message{FromEmail: "shop@example.com", Subject: "Hi", TextTemplateID: "t"},
		Recipients: []postroom.Recipient{{Email: "ann@example.org", Params: postroom.Params{"name": "Ann"}}}}
	must(t)(s.Add(ctx, "acme", "t", "draft for {{name}}", false))
	if _, err := m.SendTemplate(ctx, call); !errors.Is(err, postroom.ErrTemplateNotFound) {
		t.Fatalf("send of a draft: %v, want ErrTemplateNotFound", err)
	}
	must(t)(s.Publish(ctx, "acme", "t"))
	must(t)(s.Update(ctx, "acme", "t", "next for {{name}}", false))
	res, err := m.SendTemplate(ctx, call)
	if err != nil || res[0].Status != postroom.StatusSent {
		t.Fatalf("send: %v %+v", err, res)
	}
	envs := tr.Envelopes()
	if len(envs) != 1 || !bytes.Contains(envs[0].Data, []byte("draft for Ann")) {
		t.Fatalf("sent %d messages, want one of the published version", len(envs))
	}
}
