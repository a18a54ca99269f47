package program

import (
	"testing"
	"time"
)

func TestHelpers(t *testing.T) {
	when := time.Date(2024, 3, 5, 10, 20, 30, 0, time.UTC)
	params := map[string]any{
		"s": "hello wörld  again", "html": `<a href="x">Link</a> & <b>bold</b> 1 < 2`,
		"n": float64(3), "ns": "3.0", "i": 3, "u": uint8(3), "f32": float32(2.5),
		"arr": []any{1, 2}, "m": map[string]any{"a": 1}, "t": when, "tp": &when,
		"rfc": "2024-03-05T10:20:30+02:00", "bad": "yesterday", "q": "a b&c=d/é",
		"yes": true, "zero": float64(0), "empty": "", "typed": []string{"x", "y", "z"},
	}
	for _, tc := range []struct{ name, src, want string }{
		{"upper", "{{upper s}}", "HELLO WÖRLD  AGAIN"},
		{"lower", "{{lower \"ÀB\"}}", "àb"},
		{"title", "{{title s}}", "Hello Wörld  Again"},
		{"title keeps the rest", "{{title \"mIXED case\"}}", "MIXED Case"},
		{"default truthy", "{{default s \"x\"}}", "hello wörld  again"},
		{"default falsy", "{{default zero \"x\"}}|{{default empty n}}|{{default missing arr}}", "x|3|12"},
		{"eq numbers across types", "{{eq n i}} {{eq u n}} {{eq f32 2.5}} {{eq n 3}}", "true true true true"},
		{"eq string forms", "{{eq n \"3\"}} {{eq ns n}} {{eq yes \"true\"}} {{eq missing empty}}", "true false true true"},
		{"ne", "{{ne n 4}} {{ne n i}}", "true false"},
		{"gt lt numeric strings", "{{gt ns 2}} {{lt ns \"10\"}} {{gt \"b\" \"a\"}} {{lt bad 1}} {{gt yes 0}}", "true true false false false"},
		{"and or", "{{and yes n arr}} {{and yes empty}} {{or zero empty m}} {{or zero empty}}", "true false true false"},
		{"not", "{{not zero}} {{not s}} {{not missing}}", "true false true"},
		{"length", "{{length s}} {{length arr}} {{length m}} {{length typed}} {{length n}} {{length missing}}", "18 2 1 3 0 0"},
		{"url", "{{{url q}}}", "a+b%26c%3Dd%2F%C3%A9"},
		{"striptags", "{{{striptags html}}}|{{{striptags \"a <unclosed\"}}}", "Link & bold 1 < 2|a <unclosed"},
		{"date time", "{{date t}} {{date tp \"15:04\"}}", "2024-03-05 10:20"},
		{"date string", "{{date rfc \"2006-01-02T15:04Z07:00\"}}", "2024-03-05T10:20+02:00"},
		{"date unparseable", "[{{date bad}}][{{date n}}][{{date missing}}]", "[][][]"},
		{"lookup", "{{lookup m \"a\"}}{{lookup arr 1}}{{lookup typed \"2\"}}", "12z"},
		{"block form truthy", "{{#eq n 3}}yes{{else}}no{{/eq}}", "yes"},
		{"block form falsy", "{{#lt n 3}}yes{{else}}no{{/lt}}", "no"},
		{"block form value", "{{#default empty s}}set{{/default}}", "set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, tc.src, Text, params, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

type person struct {
	FirstName string
	Age       int
	Nick      string `handlebars:"nickname"`
	Tags      []string
	Boss      *person
	secret    string
}

// TestGoValues covers data beyond encoding/json's types, read by reflection,
// against raymond where raymond agrees (no methods are involved).
func TestGoValues(t *testing.T) {
	boss := &person{FirstName: "Ada", Age: 36}
	params := map[string]any{
		"p":      person{FirstName: "Bob", Age: 7, Nick: "bobby", Tags: []string{"a", "b"}, Boss: boss, secret: "s"},
		"pp":     boss,
		"ints":   []int{3, 1, 2},
		"i64":    int64(-5),
		"u":      uint(7),
		"f32":    float32(0.5),
		"im":     map[string]int{"b": 2, "a": 1},
		"nilp":   (*person)(nil),
		"strs":   map[string][]string{"k": {"v1", "v2"}},
		"anymap": map[any]any{"k": "v"},
	}
	for _, tc := range []struct{ name, src string }{
		{"struct fields", "{{p.firstName}} {{p.FirstName}} {{p.age}} {{p.nickname}} {{p.secret}}"},
		{"pointer chain", "{{p.boss.firstName}} {{pp.age}} {{nilp.age}}"},
		{"typed slices", "{{ints}} {{p.tags}} {{#each ints}}[{{@index}}:{{this}}]{{/each}}"},
		{"numbers", "{{i64}} {{u}} {{f32}}"},
		{"typed map", "{{im.a}} {{#each strs}}{{@key}}={{#each this}}{{.}}{{/each}}{{/each}} {{anymap.k}}"},
		{"conditions", "{{#if nilp}}x{{else}}nil{{/if}}{{#if ints}}y{{/if}}{{#with pp}}{{firstName}}{{/with}}"},
		{"helpers", "{{upper p.firstName}} {{length ints}} {{eq u 7}} {{lookup ints 2}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, tc.src, HTML, params, nil)
			if err != nil {
				t.Fatal(err)
			}
			ref := refMatch(tc.src, params, nil, got)
			if ref.err != nil || ref.panicked != nil {
				t.Fatalf("raymond: %v %v", ref.err, ref.panicked)
			}
			if got != ref.out {
				t.Errorf("%s\n got %q\nwant %q (raymond)", tc.src, got, ref.out)
			}
		})
	}
	t.Run("sorted typed map", func(t *testing.T) {
		got, err := render(t, "{{#each im}}{{@key}}{{this}}{{/each}}", HTML, params, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != "a1b2" {
			t.Errorf("got %q, want a1b2", got)
		}
	})
}
