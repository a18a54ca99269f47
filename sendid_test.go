package postroom

import (
	"bytes"
	"crypto/aes"
	"encoding/binary"
	"testing"
)

// TestBlockStream checks the boundary stream against its definition: read
// k starts at the next AES block of the counter (0, 1, 2, ... in the low 8
// bytes) and takes what it needs of the blocks from there, so that a given
// Options.Rand gives the same boundaries whatever the read sizes were.
func TestBlockStream(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 40)
	_, _, stream, err := drawCallKeys(bytes.NewReader(seed))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(seed[24:40])
	var n uint64
	for _, size := range []int{12, 12, 12, 16, 1, 20, 32, 33, 0, 12} {
		want := make([]byte, 0, size+aes.BlockSize)
		for len(want) < size {
			var in, out [aes.BlockSize]byte
			binary.BigEndian.PutUint64(in[8:], n)
			n++
			block.Encrypt(out[:], in[:])
			want = append(want, out[:]...)
		}
		got := make([]byte, size)
		if k, err := stream.Read(got); k != size || err != nil {
			t.Fatalf("Read(%d) = %d, %v", size, k, err)
		}
		if !bytes.Equal(got, want[:size]) {
			t.Fatalf("read of %d bytes after %d blocks: %x, want %x", size, n, got, want[:size])
		}
	}
}
