package suppression

import (
	"github.com/postroom/postroom/option"

	"time"
)

// Defaults of Policy's zero fields.
const (
	DefaultSoftBounces = 3
	DefaultSoftWindow  = 7 * 24 * time.Hour
	DefaultSoftExpiry  = 7 * 24 * time.Hour
)

// Policy says when Observe lists an address (see the package
// documentation's table). A hard bounce, a complaint and an unsubscribe
// list the address at once, for good; soft bounces list it only when
// they repeat, for a while. The zero Policy is the defaults.
type Policy struct {
	// SoftBounces is how many soft bounces within SoftWindow list an
	// address (the last of them lists it). Zero means 3.
	SoftBounces int
	// SoftWindow is how far back soft bounces count. Zero means 7 days.
	SoftWindow time.Duration
	// SoftExpiry is how long a soft-bounce entry lasts, from the soft
	// bounce that made it. Zero means 7 days.
	SoftExpiry time.Duration
}

// Options configure a Memory or an SQL list. The zero value is the
// default Policy and the system clock.
type Options struct {
	// Policy is what Observe applies. Its zero fields mean their
	// defaults; a negative one is refused.
	Policy Policy
	// Now is the clock: the time of an Add without Created and of an
	// Observation without At, and what List compares expiry with. Nil
	// means time.Now.
	Now func() time.Time
}

// check fills in the defaults of o, or refuses a negative field with an
// *option.Error for op (the constructor).
func (o *Options) check(op string) error {
	p := &o.Policy
	for _, err := range []error{
		option.Default(op, "Options.Policy.SoftBounces", &p.SoftBounces, DefaultSoftBounces),
		option.Default(op, "Options.Policy.SoftWindow", &p.SoftWindow, DefaultSoftWindow),
		option.Default(op, "Options.Policy.SoftExpiry", &p.SoftExpiry, DefaultSoftExpiry),
	} {
		if err != nil {
			return err
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// entry is the entry that o lists by p, once it lists one (a soft bounce
// only at the count), of the scope and list o gives (observedKey).
func (p *Policy) entry(o *Observation) Entry {
	scope, list := o.observedKey()
	e := Entry{AccountID: o.AccountID, Address: o.Address, Reason: o.Kind.reason(), Detail: o.detail(scope), SendID: o.SendID, Created: o.At, Scope: scope, List: list}
	if o.Kind == SoftBounce {
		e.Expires = o.At.Add(p.SoftExpiry)
	}
	return e
}
