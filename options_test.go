package postroom

import "testing"

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
		if err := o.setDefaults(); err == nil {
			t.Errorf("negative %s accepted", tc.name)
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
