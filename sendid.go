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
	return ids, nonce, blockStream{cipher.NewCTR(b, make([]byte, aes.BlockSize))}, nil
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

// blockStream reads the AES-CTR key stream (from a zero counter), each
// Read starting on a block of its own: a Read of 12 bytes takes one block
// and drops its last 4. The MIME boundaries (12 bytes each) have always
// been drawn that way, and a given Options.Rand must keep giving the same
// messages.
type blockStream struct{ ctr cipher.Stream }

func (s blockStream) Read(p []byte) (int, error) {
	whole := len(p) &^ (aes.BlockSize - 1)
	clear(p[:whole])
	s.ctr.XORKeyStream(p[:whole], p[:whole])
	if whole < len(p) {
		var last [aes.BlockSize]byte
		s.ctr.XORKeyStream(last[:], last[:])
		copy(p[whole:], last[:])
	}
	return len(p), nil
}
