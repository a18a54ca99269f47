package postroom

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/postroom/postroom/internal/mimemsg"
)

// fileCache holds the images and attachments of past calls, checked and
// encoded, keyed by their base64 content: a call that attaches the same
// logo or terms as an earlier one (most transactional calls do) neither
// checks its base64 again nor wraps it into lines again, and its messages
// refer to the one copy of the lines (mimemsg.File.Lines) instead of each
// call copying them into its skeleton. Its zero value is an empty cache,
// ready to use; it is safe for concurrent use.
//
// A hit is decided by comparing the content in full, so a cached entry is
// exactly what checking and wrapping the content again would give: only
// content that passed the check is kept (a content that fails it is checked
// again at each use, to report it). The key is a hash of the length and of
// samples of the content, which costs the same whatever its size; contents
// that share it (rare, or crafted) take turns in the entry, and the loser
// of a turn is checked and wrapped again, as without the cache.
//
// It keeps the most recently used entries within Options.FileCacheBytes,
// counting each entry as its content plus its lines (entry.size).
type fileCache struct {
	mu      sync.Mutex
	seed    maphash.Seed
	entries map[uint64]*list.Element // of *fileEntry
	lru     list.List                // most recently used first
	bytes   int
}

// fileEntry is a checked content and its lines.
type fileEntry struct {
	key     uint64
	content string
	lines   []byte // read-only: skeletons refer to it
}

// size is what e holds, for the bound.
func (e *fileEntry) size() int { return len(e.content) + len(e.lines) + 128 }

// fileSamples is how many 8-octet samples of a content the key hashes,
// beside its length and its first and last 32 octets.
const fileSamples = 32

// key hashes the length of content and samples of it spread evenly.
func (c *fileCache) key(content string) uint64 {
	var buf [8 + 64 + 8*fileSamples]byte
	b := binary.LittleEndian.AppendUint64(buf[:0], uint64(len(content)))
	if len(content) <= len(buf)-8 {
		b = append(b, content...)
	} else {
		b = append(b, content[:32]...)
		b = append(b, content[len(content)-32:]...)
		step := (len(content) - 8) / (fileSamples - 1)
		for i := range fileSamples {
			b = append(b, content[i*step:i*step+8]...)
		}
	}
	return maphash.Bytes(c.seed, b)
}

// lines returns the lines of content, a file's base64, and true, when the
// cache holds them; else nil and false.
func (c *fileCache) lines(content string) (k uint64, lines []byte, ok bool) {
	c.mu.Lock()
	if c.entries == nil {
		c.seed = maphash.MakeSeed()
		c.entries = map[uint64]*list.Element{}
	}
	k = c.key(content)
	el := c.entries[k]
	if el != nil {
		c.lru.MoveToFront(el)
	}
	c.mu.Unlock()
	if el == nil {
		return k, nil, false
	}
	// Compared outside the lock: an entry does not change once made.
	e := el.Value.(*fileEntry)
	if e.content != content {
		return k, nil, false
	}
	return k, e.lines, true
}

// add keeps content's lines under key k (from lines), replacing what the
// key held, then drops the least recently used entries until the cache is
// within max bytes. Content larger than max alone is not kept.
func (c *fileCache) add(k uint64, content string, lines []byte, max int) {
	e := &fileEntry{key: k, content: content, lines: lines}
	if e.size() > max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[k]; old != nil {
		c.remove(old)
	}
	c.entries[k] = c.lru.PushFront(e)
	c.bytes += e.size()
	for c.bytes > max {
		c.remove(c.lru.Back())
	}
}

// remove drops el from the cache.
func (c *fileCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*fileEntry)
	delete(c.entries, e.key)
	c.bytes -= e.size()
}

// fileLines checks content, a file's base64 text, and returns it in lines
// (mimemsg.WrapBase64), through the Mailer's file cache unless Options
// turn it off. The error is mimemsg.CheckBase64's.
func (m *Mailer) fileLines(content string) ([]byte, error) {
	if content == "" {
		return nil, nil // an empty file: no lines
	}
	max := m.opts.FileCacheBytes
	if max < 0 {
		if _, err := mimemsg.CheckBase64(content); err != nil {
			return nil, err
		}
		return mimemsg.WrapBase64(nil, content), nil
	}
	k, lines, ok := m.files.lines(content)
	if ok {
		return lines, nil
	}
	if _, err := mimemsg.CheckBase64(content); err != nil {
		return nil, err
	}
	lines = mimemsg.WrapBase64(make([]byte, 0, len(content)+len(content)/38+2), content)
	m.files.add(k, content, lines, max)
	return lines, nil
}
