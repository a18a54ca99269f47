package postroom

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
)

// drawCallKeys makes the call's one read of r (Options.Rand): the send ids'
// key and nonce, and the stream the MIME boundaries are drawn from.
func drawCallKeys(r io.Reader) (ids cipher.Block, nonce uint64, boundaries io.Reader, err error) {
	var seed [40]byte
	if _, err := io.ReadFull(r, seed[:]); err != nil {
		return nil, 0, nil, fmt.Errorf("postroom: reading Options.Rand: %w", err)
	}
	ids, _ = aes.NewCipher(seed[:16]) // a 16-byte key cannot fail
	nonce = binary.BigEndian.Uint64(seed[16:24])
	b, _ := aes.NewCipher(seed[24:40])
	return ids, nonce, &streamReader{block: b}, nil
}

// sendID is recipient i's send id: the AES encryption of (nonce, i) under a
// key drawn for the call, so ids are unique within a call (AES is a
// permutation), unpredictable, and need no lock.
func (j *job) sendID(i int, w *worker) string {
	binary.BigEndian.PutUint64(w.in[:8], j.nonce)
	binary.BigEndian.PutUint64(w.in[8:], uint64(i))
	j.ids.Encrypt(w.out[:], w.in[:])
	return hex.EncodeToString(w.out[:])
}

// streamReader is a counter-mode stream under a key drawn from
// Options.Rand, so that the MIME boundaries come from the call's one read of
// Options.Rand.
type streamReader struct {
	block cipher.Block
	n     uint64
}

func (s *streamReader) Read(p []byte) (int, error) {
	var in, out [16]byte
	written := 0
	for written < len(p) {
		binary.BigEndian.PutUint64(in[8:], s.n)
		s.n++
		s.block.Encrypt(out[:], in[:])
		written += copy(p[written:], out[:])
	}
	return written, nil
}
