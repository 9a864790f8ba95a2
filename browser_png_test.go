package main

// Keeping the screenshots in docs/screenshots small: a page is flat
// colours plus the anti-aliased edges of its text, so the 256 colours
// most used cover it, and the rare edge shades that are left take the
// nearest of those. The result is a paletted PNG about a third of
// Chromium's size that looks the same.

import (
	"bytes"
	"cmp"
	"image"
	"image/color"
	"image/png"
	"slices"
)

// browserSmallPNG re-encodes a screenshot as a paletted PNG of its 256
// most used colours, compressed as far as image/png goes.
func browserSmallPNG(data []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	bounds := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	used := make([]color.RGBA, 0, len(counts))
	for c := range counts {
		used = append(used, c)
	}
	// Most used first; ties in a fixed order, so the same page gives the
	// same file.
	slices.SortFunc(used, func(a, b color.RGBA) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a.R, b.R), cmp.Compare(a.G, b.G),
			cmp.Compare(a.B, b.B), cmp.Compare(a.A, b.A))
	})
	palette := make(color.Palette, 0, 256)
	for _, c := range used[:min(len(used), 256)] {
		palette = append(palette, c)
	}
	index := make(map[color.RGBA]uint8, len(used))
	for _, c := range used {
		index[c] = uint8(palette.Index(c))
	}
	out := image.NewPaletted(bounds, palette)
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			out.SetColorIndex(x, y, index[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)])
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
