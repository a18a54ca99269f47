package suppression_test

import (
	"errors"
	"testing"

	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/option"
	"github.com/postroom/postroom/suppression"
)

func TestMemoryContract(t *testing.T) {
	runContract(t, func(t *testing.T, opts suppression.Options) suppression.List {
		m, err := suppression.NewMemory(opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}

func TestNewRefusesNegativePolicy(t *testing.T) {
	db := dbtest.SQLite(t)
	for _, tt := range []struct {
		p     suppression.Policy
		field string
	}{
		{suppression.Policy{SoftBounces: -1}, "Options.Policy.SoftBounces"},
		{suppression.Policy{SoftWindow: -1}, "Options.Policy.SoftWindow"},
		{suppression.Policy{SoftExpiry: -1}, "Options.Policy.SoftExpiry"},
	} {
		_, err := suppression.NewMemory(suppression.Options{Policy: tt.p})
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Op != "suppression.NewMemory" || oe.Field != tt.field {
			t.Errorf("NewMemory(%+v) = %v; want an *option.Error for %s", tt.p, err, tt.field)
		}
		_, err = suppression.NewSQL(db, suppression.Options{Policy: tt.p})
		if !errors.As(err, &oe) || oe.Op != "suppression.NewSQL" || oe.Field != tt.field {
			t.Errorf("NewSQL(%+v) = %v; want an *option.Error for %s", tt.p, err, tt.field)
		}
	}
}
