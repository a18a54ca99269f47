package workload

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

func TestPNGOfSize(t *testing.T) {
	img := stripes(40, 30, color.NRGBA{0, 0, 0xff, 0xff}, color.NRGBA{0xff, 0, 0, 0xff})
	for _, size := range []int{4000, 5000} {
		b, err := pngOfSize(img, size)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != size {
			t.Errorf("%d bytes, want %d", len(b), size)
		}
		got, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if got.Bounds() != img.Bounds() {
			t.Fatalf("bounds %v, want %v", got.Bounds(), img.Bounds())
		}
		for y := range 30 {
			for x := range 40 {
				if r, g, b, _ := got.At(x, y).RGBA(); color.NRGBA64Model.Convert(got.At(x, y)) != color.NRGBA64Model.Convert(img.At(x, y)) {
					t.Fatalf("pixel %d,%d = %d,%d,%d, want %v", x, y, r>>8, g>>8, b>>8, img.At(x, y))
				}
			}
		}
	}
	// 40×30 RGB is 3,630 bytes of image data before any header.
	if b, err := pngOfSize(img, 3630); err == nil {
		t.Errorf("pngOfSize(3630) = %d bytes, want an error", len(b))
	}
}

func TestStripes(t *testing.T) {
	from, to := color.NRGBA{0x10, 0x20, 0x30, 0xff}, color.NRGBA{0xf0, 0xe0, 0xd0, 0xff}
	img := stripes(13, 7, from, to)
	if img.Bounds() != image.Rect(0, 0, 13, 7) || !img.Opaque() {
		t.Fatalf("bounds %v, opaque %v", img.Bounds(), img.Opaque())
	}
	if got := img.NRGBAAt(0, 0); got != from {
		t.Errorf("first pixel %v, want %v", got, from)
	}
	if got := img.NRGBAAt(12, 0); got != to {
		t.Errorf("last pixel %v, want %v", got, to)
	}
	// Pixels 6 to 11 of the first row are a light stripe.
	if got := img.NRGBAAt(6, 0); got.R < 0x80 || got.G < 0x80 || got.B < 0x80 {
		t.Errorf("pixel 6,0 = %v, want a light stripe", got)
	}
}
