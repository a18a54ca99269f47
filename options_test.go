package postroom

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"
)

// TestSetDefaults checks the one rule of Options' numbers: zero means the
// default, a negative value is refused, except for the
// template cache's bounds, where either one negative turns the cache off.
func TestSetDefaults(t *testing.T) {
	var o Options
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][2]int{
		"Concurrency":          {o.Concurrency, defaultConcurrency()},
		"MaxRecipients":        {o.MaxRecipients, DefaultMaxRecipients},
		"MaxMessageBytes":      {o.MaxMessageBytes, DefaultMaxMessageBytes},
		"MaxBCC":               {o.MaxBCC, DefaultMaxBCC},
		"MaxHeaders":           {o.MaxHeaders, DefaultMaxHeaders},
		"MaxTemplateBytes":     {o.MaxTemplateBytes, DefaultMaxTemplateBytes},
		"MaxTemplateDepth":     {o.MaxTemplateDepth, DefaultMaxTemplateDepth},
		"MaxRenderBytes":       {o.MaxRenderBytes, DefaultMaxRenderBytes},
		"MaxRenderSteps":       {o.MaxRenderSteps, DefaultMaxRenderSteps},
		"MaxPartialDepth":      {o.MaxPartialDepth, DefaultMaxPartialDepth},
		"TemplateCacheEntries": {o.TemplateCacheEntries, DefaultTemplateCacheEntries},
		"TemplateCacheBytes":   {o.TemplateCacheBytes, DefaultTemplateCacheBytes},
	} {
		if got[0] != got[1] {
			t.Errorf("%s: %d, want the default %d", name, got[0], got[1])
		}
	}
	if o.Logger == nil || o.Now == nil || o.Rand == nil {
		t.Errorf("Logger, Now or Rand left nil")
	}
	if o.VERP.Local != "" {
		t.Errorf("VERP off, Local %q", o.VERP.Local)
	}
	o = Options{VERP: VERP{Domain: "bounce.example.com"}}
	if err := o.setDefaults(); err != nil || o.VERP.Local != DefaultVERPLocal {
		t.Errorf("VERP on: Local %q, %v", o.VERP.Local, err)
	}

	for _, tc := range []struct {
		name string
		set  func(*Options)
	}{
		{"Concurrency", func(o *Options) { o.Concurrency = -1 }},
		{"MaxRecipients", func(o *Options) { o.MaxRecipients = -1 }},
		{"MaxRenderSteps", func(o *Options) { o.MaxRenderSteps = -5 }},
		{"MaxPartialDepth", func(o *Options) { o.MaxPartialDepth = -1 }},
	} {
		var o Options
		tc.set(&o)
		err := o.setDefaults()
		var oe *OptionsError
		if !errors.As(err, &oe) || oe.Op != "postroom.New" || oe.Field != "Options."+tc.name {
			t.Errorf("negative %s: %v; want an *OptionsError for Options.%[1]s", tc.name, err)
		}
	}

	for _, tc := range []struct {
		in, want [2]int
	}{
		{[2]int{5, 0}, [2]int{5, DefaultTemplateCacheBytes}},
		{[2]int{0, 100}, [2]int{DefaultTemplateCacheEntries, 100}},
		{[2]int{-1, 100}, [2]int{-1, -1}},
		{[2]int{5, -3}, [2]int{-1, -1}},
		{[2]int{-7, 0}, [2]int{-1, -1}},
	} {
		o := Options{TemplateCacheEntries: tc.in[0], TemplateCacheBytes: tc.in[1]}
		if err := o.setDefaults(); err != nil {
			t.Fatal(err)
		}
		if got := [2]int{o.TemplateCacheEntries, o.TemplateCacheBytes}; got != tc.want {
			t.Errorf("cache bounds %v: %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestNewOptionsError checks that every option New refuses is an
// *OptionsError naming the field's path.
func TestNewOptionsError(t *testing.T) {
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	tr := TransportFunc(func(context.Context, *Envelope) error { return nil })
	for _, tc := range []struct {
		field string
		opts  Options
	}{
		{"Options.Auth", Options{}},
		{"Options.MaxBCC", Options{Auth: NoAuth{}, MaxBCC: -1}},
		{"Options.VERP.Local", Options{Auth: NoAuth{}, VERP: VERP{Local: "b"}}},
		{"Options.VERP.Domain", Options{Auth: NoAuth{}, VERP: VERP{Domain: "no domain"}}},
		{"Options.DKIM[0].Selector", Options{Auth: NoAuth{}, DKIM: []DKIMSigner{{Domain: "example.com", Selector: "a b", Key: edKey}}}},
		{"Options.DKIM[0].Key", Options{Auth: NoAuth{}, DKIM: []DKIMSigner{{Domain: "example.com", Selector: "s1"}}}},
		{"Options.DKIM[1].Key", Options{Auth: NoAuth{}, DKIM: []DKIMSigner{{Domain: "example.com", Selector: "s1", Key: edKey}, {Domain: "example.com", Selector: "s2", Key: weak}}}},
		{`Options.Helpers["if"]`, Options{Auth: NoAuth{}, Helpers: map[string]Helper{"if": HelperFunc1(func(s string) (string, error) { return s, nil })}}},
		{`Options.Helpers["x"]`, Options{Auth: NoAuth{}, Helpers: map[string]Helper{"x": {}}}},
	} {
		m, err := New(tr, tc.opts)
		var oe *OptionsError
		if !errors.As(err, &oe) || oe.Field != tc.field || oe.Op != "postroom.New" {
			t.Errorf("New = %v, %v; want an *OptionsError for %s", m, err, tc.field)
		}
	}
}
