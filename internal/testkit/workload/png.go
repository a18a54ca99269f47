package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
)

// stripes returns an opaque w×h image of diagonal stripes, two colours
// blended along the x axis: a deterministic picture that looks like an
// image and costs nothing to describe.
func stripes(w, h int, from, to color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	mix := func(a, b uint8, x int) uint8 { return uint8((int(a)*(w-1-x) + int(b)*x) / max(1, w-1)) }
	for y := range h {
		for x := range w {
			c := color.NRGBA{mix(from.R, to.R, x), mix(from.G, to.G, x), mix(from.B, to.B, x), 0xff}
			if (x+y)/6%2 == 1 {
				c.R, c.G, c.B = c.R/2+0x80, c.G/2+0x80, c.B/2+0x80
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// pngOfSize encodes img as a PNG of exactly size bytes. The image data is
// stored uncompressed (deflate's stored blocks, which every Go version
// writes alike) and the file is padded to size with a tEXt chunk before
// IEND. It fails when the encoded image alone leaves no room for that chunk.
func pngOfSize(img image.Image, size int) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("workload: encoding a png: %w", err)
	}
	const keyword = "Comment\x00"
	const chunkOverhead = 12 // length, type, CRC
	b := buf.Bytes()
	iend := len(b) - chunkOverhead // IEND has no data
	room := size - len(b) - chunkOverhead - len(keyword)
	if room < 0 || string(b[iend+4:iend+8]) != "IEND" {
		return nil, fmt.Errorf("workload: a %d-byte png does not fit in %d bytes with its padding", len(b), size)
	}
	data := append([]byte(keyword), filler(room)...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	chunk = append(chunk, "tEXt"...)
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	out := make([]byte, 0, size)
	out = append(out, b[:iend]...)
	out = append(out, chunk...)
	out = append(out, b[iend:]...)
	return out, nil
}

// filler returns n bytes of printable ASCII text.
func filler(n int) []byte {
	const pattern = "postroom test fixture; "
	b := make([]byte, n)
	for i := range b {
		b[i] = pattern[i%len(pattern)]
	}
	return b
}
