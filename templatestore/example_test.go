package templatestore_test

import (
	"context"
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

func ExampleMemory() {
	store := templatestore.NewMemory()
	if err := store.Put("acme", "welcome", "Hello {{name}}!"); err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	source, err := store.Template(ctx, "acme", "welcome")
	fmt.Printf("%q %v\n", source, err)

	// Another account does not see acme's templates.
	_, err = store.Template(ctx, "globex", "welcome")
	fmt.Println(errors.Is(err, postroom.ErrTemplateNotFound))

	// Ids cannot name paths.
	err = store.Put("acme", "../welcome", "x")
	fmt.Println(errors.Is(err, templatestore.ErrInvalidID))
	// Output:
	// "Hello {{name}}!" <nil>
	// true
	// true
}

func ExampleDir() {
	// In production: templatestore.NewDir(os.DirFS("/srv/templates")).
	store := templatestore.NewDir(fstest.MapFS{
		"acme/welcome.html": {Data: []byte("<p>Hello {{name}}</p>")},
		"acme/welcome.txt":  {Data: []byte("Hello {{name}}")},
	})

	ctx := context.Background()
	source, err := store.Template(ctx, "acme", "welcome.html")
	fmt.Printf("%q %v\n", source, err)

	_, err = store.Template(ctx, "acme", "missing")
	fmt.Println(errors.Is(err, postroom.ErrTemplateNotFound))

	_, err = store.Template(ctx, "globex/../acme", "welcome.txt")
	fmt.Println(errors.Is(err, postroom.ErrTemplateNotFound), errors.Is(err, templatestore.ErrInvalidID))
	// Output:
	// "<p>Hello {{name}}</p>" <nil>
	// true
	// true true
}

// ExampleManager checks a template with the Mailer, adds it, changes its
// draft, publishes it and rolls it back: calls always get the published
// version.
func ExampleManager() {
	ctx := context.Background()
	store := templatestore.NewMemory()
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}, Templates: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	// save refuses a source that does not compile, as package httpapi
	// and the postroom command do.
	save := func(source string, publish bool) {
		if err := m.CheckTemplate(ctx, source); err != nil {
			var te *postroom.TemplateError
			if errors.As(err, &te) {
				fmt.Printf("refused at line %d, column %d: %s\n", te.Line, te.Column, te.Reason)
			}
			return
		}
		t, err := store.Update(ctx, "acme", "welcome", source, publish)
		if errors.Is(err, postroom.ErrTemplateNotFound) {
			t, err = store.Add(ctx, "acme", "welcome", source, publish)
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("draft %q, live version %d\n", t.Draft, t.Published.Version)
	}
	live := func() {
		source, err := store.Template(ctx, "acme", "welcome")
		fmt.Printf("calls get %q %v\n", source, err)
	}

	save("Hello {{name}}!", true)
	save("Hi {{name}}.", false) // a draft: calls keep version 1
	live()
	save("Hi {{#if name}}{{name}}.", true)
	if _, err := store.Publish(ctx, "acme", "welcome"); err != nil {
		fmt.Println(err)
	}
	live()
	if _, err := store.PublishVersion(ctx, "acme", "welcome", 1); err != nil {
		fmt.Println(err)
	}
	live()
	info, _ := store.Info(ctx, "acme", "welcome")
	for _, v := range info.Versions {
		fmt.Printf("version %d %q from %d\n", v.Version, v.Source, v.From)
	}
	// Output:
	// draft "Hello {{name}}!", live version 1
	// draft "Hi {{name}}.", live version 1
	// calls get "Hello {{name}}!" <nil>
	// refused at line 1, column 4: block {{#if}} is never closed
	// calls get "Hi {{name}}." <nil>
	// calls get "Hello {{name}}!" <nil>
	// version 3 "Hello {{name}}!" from 1
	// version 2 "Hi {{name}}." from 0
	// version 1 "Hello {{name}}!" from 0
}
