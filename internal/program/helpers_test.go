package program

import (
	"encoding/json"
	"fmt"
	"strings"
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
		{"default falsy", "{{default zero \"x\"}}|{{default empty n}}|{{default missing arr}}", "x|3|1,2"},
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
	Tags      []string
	Boss      *person
	secret    string
}

// TestGoValues covers data beyond encoding/json's types, read by reflection,
// against raymond where raymond agrees with handlebars.js (no methods are
// involved; arrays print as handlebars.js prints them, tested below).
func TestGoValues(t *testing.T) {
	boss := &person{FirstName: "Ada", Age: 36}
	params := map[string]any{
		"p":      person{FirstName: "Bob", Age: 7, Tags: []string{"a", "b"}, Boss: boss, secret: "s"},
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
		{"struct fields", "{{p.FirstName}} {{p.Age}} {{p.secret}}"},
		{"pointer chain", "{{p.Boss.FirstName}} {{pp.Age}} {{nilp.Age}}"},
		{"typed slices", "{{#each ints}}[{{@index}}:{{this}}]{{/each}}{{#each p.Tags}}{{.}}{{/each}}"},
		{"numbers", "{{i64}} {{u}} {{f32}}"},
		{"typed map", "{{im.a}} {{#each strs}}{{@key}}={{#each this}}{{.}}{{/each}}{{/each}} {{anymap.k}}"},
		{"conditions", "{{#if nilp}}x{{else}}nil{{/if}}{{#if ints}}y{{/if}}{{#with pp}}{{FirstName}}{{/with}}"},
		{"helpers", "{{upper p.FirstName}} {{length ints}} {{eq u 7}} {{lookup ints 2}}"},
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
			if normEscapes(got) != normEscapes(ref.out) {
				t.Errorf("%s\n got %q\nwant %q (raymond)", tc.src, got, ref.out)
			}
		})
	}
	t.Run("typed slices print joined", func(t *testing.T) {
		got, err := render(t, "{{ints}} {{p.Tags}} {{f32}} {{p}} {{nilp}}", HTML, params, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := "3,1,2 a,b 0.5 [object Object] "; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
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

// Types whose fields encoding/json names in every way it can: tags,
// options, "-", unexported fields, embedded structs (by value, by pointer,
// unexported, tagged), a name hidden by a shallower field, a tie broken by
// a tag and a tie that drops the name.
type (
	jsonOrder struct {
		ID       string `json:"id"`
		Customer string `json:"customer_name,omitempty"`
		Total    float64
		Note     string `json:"-"`
		//lint:ignore SA5008 the test checks that "-," names the field "-", as encoding/json does
		Dash   string `json:"-,"` // named "-"
		secret string
		jsonBase
		*jsonMeta
		jsonHidden
		Lines   []jsonLine `json:"lines"`
		Shipped jsonBase   `json:"shipped"`
	}
	jsonBase struct {
		Kind   string `json:"kind"`
		Region string
		ID     string `json:"id"` // hidden by jsonOrder.ID
	}
	jsonMeta struct {
		Source string `json:"source"`
		Region string `json:"region"` // another name than jsonBase.Region
		Tie    string
	}
	jsonHidden struct {
		Tie    string // ties with jsonMeta.Tie: the name is dropped
		Tagged string `json:"Region"` // tagged: wins the tie with jsonBase.Region
	}
	jsonLine struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
)

// TestStructsResolveLikeJSON is the oracle for struct parameters: a
// template renders a Go struct exactly as it renders the struct's
// encoding/json round trip (the map[string]any the HTTP API would give).
func TestStructsResolveLikeJSON(t *testing.T) {
	order := jsonOrder{
		ID: "o-1", Customer: "Ann", Total: 12.5, Note: "n", Dash: "d", secret: "s",
		jsonBase:   jsonBase{Kind: "web", Region: "eu", ID: "base"},
		jsonMeta:   &jsonMeta{Source: "app", Region: "meta", Tie: "m"},
		jsonHidden: jsonHidden{Tie: "h", Tagged: "tagged"},
		Lines:      []jsonLine{{"A-1", 2}, {"B-2", 1}},
		Shipped:    jsonBase{Kind: "post", Region: "us", ID: "ship"},
	}
	raw, err := json.Marshal(order)
	if err != nil {
		t.Fatal(err)
	}
	var asJSON map[string]any
	if err := json.Unmarshal(raw, &asJSON); err != nil {
		t.Fatal(err)
	}
	names := []string{"id", "ID", "customer_name", "Customer", "Total", "total", "Note", "-", "Dash",
		"secret", "kind", "Kind", "Region", "region", "source", "Tie", "Tagged", "jsonBase", "jsonMeta",
		"Lines", "Shipped"} // composites print with fmt, differently as structs and maps
	var src strings.Builder
	for _, n := range names {
		fmt.Fprintf(&src, "%s=[{{o.[%s]}}] ", n, n)
	}
	src.WriteString("{{#each o.lines}}{{sku}}x{{qty}} {{/each}}{{o.shipped.kind}} {{o.shipped.id}} {{#with o}}{{id}}{{/with}} {{lookup o \"kind\"}}")
	for _, tc := range []struct {
		name string
		o    any
	}{{"struct", order}, {"pointer", &order}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, src.String(), HTML, map[string]any{"o": tc.o}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := render(t, src.String(), HTML, map[string]any{"o": asJSON}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("struct renders\n%s\nits JSON round trip renders\n%s", got, want)
			}
		})
	}
	// Go field order, not sorted: encoding/json's order, without the
	// fields behind a nil embedded pointer.
	for _, tc := range []struct {
		o    any
		want string
	}{
		{jsonLine{"A", 1}, "sku=A,qty=1,"},
		{jsonMeta{Source: "s"}, "source=s,region=,Tie=,"},
		{struct {
			*jsonMeta
			N int `json:"n"`
		}{N: 1}, "n=1,"},
	} {
		got, err := render(t, "{{#each o}}{{@key}}={{this}},{{/each}}", HTML, map[string]any{"o": tc.o}, nil)
		if err != nil || got != tc.want {
			t.Errorf("each over %T = %q, %v; want %q", tc.o, got, err, tc.want)
		}
	}
}

// TestHelperTable checks that every helper id has one entry in helperTable,
// found back by its name, and a function unless the evaluator runs it.
func TestHelperTable(t *testing.T) {
	seen := make(map[string]bool)
	for id := helperID(1); int(id) < len(helperTable); id++ {
		s := helperTable[id]
		if s.name == "" || seen[s.name] || helperIDs[s.name] != id {
			t.Errorf("helper %d: name %q missing, repeated or not found back", id, s.name)
		}
		seen[s.name] = true
		if evaluated := id < hUpper && id != hLookup; evaluated != (s.fn == nil) {
			t.Errorf("helper %q: fn set %v", s.name, s.fn != nil)
		}
	}
	if got, want := len(helperIDs), len(helperTable)-1; got != want {
		t.Errorf("%d helper names, want %d", got, want)
	}
	if got, want := len(ExtraHelpers()), len(helperTable)-int(hUpper); got != want {
		t.Errorf("ExtraHelpers has %d helpers, want %d", got, want)
	}
}
