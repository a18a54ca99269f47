package htmltext

// The tags a Converter has read, to skip the reading of those that come
// again. An engine converts the html of one template for recipient after
// recipient, and e-mail html repeats its tags (a table's cells, the spans
// of its rows): most tags of a document are tags the Converter has read,
// byte for byte. What x/net/html's tokenizer reads in a tag follows from
// the tag's bytes alone, from its '<' to its '>' (attributes, whether it
// is self-closing, the raw text it starts), and so does what the
// Converter takes from it (its atom, whether it hides its element, its
// href and alt values). So a tag whose bytes are those of a tag read
// before is that tag: Append applies what was recorded instead of reading
// it again. What a tag writes still depends on the conversion's state,
// and Append applies each tag to it as it comes.
//
// Only tags that end at their first '>' are remembered (a quoted '>'
// makes a tag longer), so that the bytes to compare are found without
// reading the tag.

import "encoding/binary"

const (
	// memoSlots is the size of the memo's table, a power of 2, and
	// memoTags the most tags it remembers (half of it, for short probes).
	memoSlots = 1024
	memoTags  = memoSlots / 2
	// memoBytes bounds the bytes of the tags it remembers and of their
	// href and alt values; a tag longer than maxMemoTag is not remembered.
	memoBytes  = 64 << 10
	maxMemoTag = 1 << 10
)

// memo is the tags a Converter has read. When it is full it forgets them
// all and starts again.
type memo struct {
	slots [memoSlots]int32 // 1 + an index in tags, or 0
	tags  []memoTag
	store []byte // the tags' bytes, href and alt values
}

// memoTag is a tag read before: its bytes and what they say.
type memoTag struct {
	tok       token
	raw       [2]int32 // its bytes, in store
	href, alt [2]int32 // its values, in store
	hash      uint32
}

// memoHash hashes a tag's bytes (3 or more): its length, first and last
// 8 bytes.
func memoHash(t []byte) uint32 {
	var first, last uint64
	if len(t) >= 8 {
		first, last = binary.LittleEndian.Uint64(t), binary.LittleEndian.Uint64(t[len(t)-8:])
	} else {
		first = uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[len(t)-2])<<24
	}
	h := (first^uint64(len(t)))*0x9E3779B97F4A7C15 ^ last*0xC2B2AE3D27D4EB4F
	return uint32(h >> 32)
}

// find returns the tag whose bytes are t, or nil.
func (m *memo) find(t []byte) *memoTag {
	h := memoHash(t)
	for i := h & (memoSlots - 1); m.slots[i] != 0; i = (i + 1) & (memoSlots - 1) {
		e := &m.tags[m.slots[i]-1]
		if e.hash == h && int(e.raw[1]-e.raw[0]) == len(t) && string(m.store[e.raw[0]:e.raw[1]]) == string(t) {
			return e
		}
	}
	return nil
}

// values returns the bytes of a span of store.
func (m *memo) values(span [2]int32) []byte { return m.store[span[0]:span[1]] }

// add remembers the tag tk, whose bytes are t and values href and alt.
func (m *memo) add(t []byte, tk *token, href, alt []byte) {
	if len(t) > maxMemoTag {
		return
	}
	if len(m.tags) == memoTags || len(m.store)+len(t)+len(href)+len(alt) > memoBytes {
		m.slots, m.tags, m.store = [memoSlots]int32{}, m.tags[:0], m.store[:0]
	}
	e := memoTag{tok: *tk, hash: memoHash(t)}
	e.raw[0] = int32(len(m.store))
	m.store = append(m.store, t...)
	e.raw[1] = int32(len(m.store))
	m.store = append(m.store, href...)
	e.href = [2]int32{e.raw[1], int32(len(m.store))}
	m.store = append(m.store, alt...)
	e.alt = [2]int32{e.href[1], int32(len(m.store))}
	m.tags = append(m.tags, e)
	i := e.hash & (memoSlots - 1)
	for m.slots[i] != 0 {
		i = (i + 1) & (memoSlots - 1)
	}
	m.slots[i] = int32(len(m.tags))
}
