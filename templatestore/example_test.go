package templatestore_test

import (
	"context"
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/templatestore"
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
