package program

import (
	"encoding/json"
	"iter"
)

// Object is a JSON object that keeps its members in the order they were
// written, as JSON.parse does: what Params.UnmarshalJSON (in the postroom
// package) and DecodeValue make of a JSON object, so that {{#each}} visits
// its keys in handlebars.js's order. The zero value is an empty object. An
// Object never changes after decoding and is safe for concurrent use; its
// methods do not modify it.
type Object struct {
	members []member
	// index maps a key to its position, for objects of more than
	// indexFrom members (below that a scan is faster); nil otherwise.
	index map[string]int
	// intKeys: some key is an array index, which JavaScript's property
	// order puts first.
	intKeys bool
}

// member is one key and its value.
type member struct {
	key string
	val any
}

// indexFrom is the number of members from which an Object has an index.
const indexFrom = 8

// Len returns the number of members.
func (o *Object) Len() int { return len(o.members) }

// Get returns the value of key and whether o has it.
func (o *Object) Get(key string) (any, bool) {
	if o.index != nil {
		i, ok := o.index[key]
		if !ok {
			return nil, false
		}
		return o.members[i].val, true
	}
	for i := range o.members {
		if m := &o.members[i]; m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// All yields the members in the order they were first written (a key
// written twice keeps its first place and its last value, as in
// JSON.parse). {{#each}} visits them in JavaScript's property order
// instead: array indexes (0, 1, ... in their canonical form) first, in
// numeric order, then the other keys in this order.
func (o *Object) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for _, m := range o.members {
			if !yield(m.key, m.val) {
				return
			}
		}
	}
}

// MarshalJSON writes the members in their order.
func (o *Object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o.members {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(m.val)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON decodes a JSON object into o as DecodeValue does; null
// leaves o as it is.
func (o *Object) UnmarshalJSON(b []byte) error {
	d := decoder{b: b}
	d.space()
	if d.literal("null") {
		return d.end()
	}
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return d.syntax("expected an object")
	}
	obj, err := d.object(0)
	if err != nil {
		return err
	}
	if err := d.end(); err != nil {
		return err
	}
	*o = *obj
	return nil
}

// newObject returns an Object of members, which it keeps, with index,
// the positions of their keys, or nil to have it built when needed.
func newObject(members []member, index map[string]int) *Object {
	o := &Object{members: members, index: index}
	build := index == nil && len(members) > indexFrom
	if build {
		o.index = make(map[string]int, len(members))
	}
	for i, m := range members {
		if build {
			o.index[m.key] = i
		}
		if !o.intKeys {
			_, o.intKeys = arrayIndex(m.key)
		}
	}
	return o
}

// add appends a member to ms, or replaces the value of a key already
// there in its place, as JSON.parse and Object.assign do. index, when not
// nil, maps the keys of ms to their positions and is kept up to date.
func add(ms []member, index map[string]int, k string, v any) []member {
	if index != nil {
		if i, ok := index[k]; ok {
			ms[i].val = v
			return ms
		}
		index[k] = len(ms)
	} else {
		for i := range ms {
			if ms[i].key == k {
				ms[i].val = v
				return ms
			}
		}
	}
	return append(ms, member{k, v})
}

// objectBuilder builds an Object member by member, for partial contexts.
type objectBuilder struct {
	members []member
	index   map[string]int
}

func (b *objectBuilder) set(k string, v any) {
	if b.index == nil && len(b.members) == indexFrom {
		b.index = make(map[string]int, 2*indexFrom)
		for i, m := range b.members {
			b.index[m.key] = i
		}
	}
	b.members = add(b.members, b.index, k, v)
}

func (b *objectBuilder) object() *Object { return newObject(b.members, b.index) }
