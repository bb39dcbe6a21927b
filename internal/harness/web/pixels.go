package web

// Screenshots are compared pixel by pixel under a policy: a per-channel
// tolerance absorbs the anti-aliasing noise of font rendering, and a
// share of differing pixels decides. The diff image is the evidence: the
// baseline faded to grey with every differing pixel in red, so a
// reviewer sees at a glance what moved.

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
)

// PixelDiff is the outcome of comparing a screenshot with its baseline.
type PixelDiff struct {
	Width, Height int
	// Differing is the number of pixels beyond the tolerance; Ratio is
	// its share of all pixels.
	Differing int
	Ratio     float64
	// SizeChanged is set when the images differ in size; every pixel
	// then counts as differing.
	SizeChanged bool
	// Image is the diff image, PNG.
	Image []byte
}

// ComparePNG compares the PNG actual with the PNG baseline, counting the
// pixels one of whose channels differs by more than tolerance (0–255).
func ComparePNG(baseline, actual []byte, tolerance int) (*PixelDiff, error) {
	base, err := png.Decode(bytes.NewReader(baseline))
	if err != nil {
		return nil, fmt.Errorf("decoding baseline: %w", err)
	}
	act, err := png.Decode(bytes.NewReader(actual))
	if err != nil {
		return nil, fmt.Errorf("decoding screenshot: %w", err)
	}
	bb, ab := base.Bounds(), act.Bounds()
	d := &PixelDiff{Width: ab.Dx(), Height: ab.Dy()}
	out := image.NewRGBA(image.Rect(0, 0, ab.Dx(), ab.Dy()))
	red := color.RGBA{R: 255, A: 255}
	if bb.Dx() != ab.Dx() || bb.Dy() != ab.Dy() {
		d.SizeChanged = true
		d.Differing = ab.Dx() * ab.Dy()
		d.Ratio = 1
		for y := 0; y < ab.Dy(); y++ {
			for x := 0; x < ab.Dx(); x++ {
				out.Set(x, y, red)
			}
		}
	} else {
		t := uint32(tolerance) * 0x101 // 8-bit tolerance in 16-bit channels
		for y := 0; y < ab.Dy(); y++ {
			for x := 0; x < ab.Dx(); x++ {
				r1, g1, b1, a1 := base.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
				r2, g2, b2, a2 := act.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
				if absDiff(r1, r2) > t || absDiff(g1, g2) > t || absDiff(b1, b2) > t || absDiff(a1, a2) > t {
					d.Differing++
					out.Set(x, y, red)
					continue
				}
				// Faded grey: the unchanged page stays recognisable
				// without competing with the red.
				grey := uint8(((r1*299 + g1*587 + b1*114) / 1000) >> 8)
				grey = 255 - (255-grey)/4
				out.Set(x, y, color.RGBA{R: grey, G: grey, B: grey, A: 255})
			}
		}
		if n := ab.Dx() * ab.Dy(); n > 0 {
			d.Ratio = float64(d.Differing) / float64(n)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, out); err != nil {
		return nil, fmt.Errorf("encoding diff image: %w", err)
	}
	d.Image = buf.Bytes()
	return d, nil
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
