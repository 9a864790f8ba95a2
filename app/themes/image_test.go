package themes

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

// testPNG is a w×h PNG.
func testPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{200, 10, 10, 255})
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testWebP is the header of a WebP file of the given chunk (VP8L: a
// lossless one, VP8X: an extended one), its sizes in place; enough for
// sniffImage, which reads no further.
func testWebP(chunk string, w, h int) []byte {
	var d []byte
	switch chunk {
	case "VP8L":
		bits := uint32(w-1) | uint32(h-1)<<14
		d = binary.LittleEndian.AppendUint32([]byte{0x2f}, bits)
	case "VP8X":
		d = []byte{0, 0, 0, 0, byte(w - 1), byte((w - 1) >> 8), byte((w - 1) >> 16), byte(h - 1), byte((h - 1) >> 8), byte((h - 1) >> 16)}
	case "VP8 ":
		d = []byte{0, 0, 0, 0x9d, 0x01, 0x2a}
		d = binary.LittleEndian.AppendUint16(d, uint16(w))
		d = binary.LittleEndian.AppendUint16(d, uint16(h))
	}
	body := append([]byte("WEBP"+chunk), binary.LittleEndian.AppendUint32(nil, uint32(len(d)))...)
	body = append(body, d...)
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// testICO is an icon file of one image: data, declared w×h.
func testICO(w, h int, data []byte) []byte {
	b := []byte{0, 0, 1, 0, 1, 0}
	e := []byte{byte(w), byte(h), 0, 0, 1, 0, 32, 0}
	e = binary.LittleEndian.AppendUint32(e, uint32(len(data)))
	e = binary.LittleEndian.AppendUint32(e, 22)
	return append(append(b, e...), data...)
}

func TestSniffImage(t *testing.T) {
	bmp := append([]byte{40, 0, 0, 0}, make([]byte, 60)...)
	for _, c := range []struct {
		name   string
		data   []byte
		ct     string
		w, h   int
		reason string // the refusal's words; "" for none
	}{
		{"png", testPNG(t, 64, 32), typePNG, 64, 32, ""},
		{"jpeg", testJPEG(t, 100, 40), typeJPEG, 100, 40, ""},
		{"webp lossless", testWebP("VP8L", 300, 200), typeWebP, 300, 200, ""},
		{"webp extended", testWebP("VP8X", 1024, 16), typeWebP, 1024, 16, ""},
		{"webp lossy", testWebP("VP8 ", 48, 48), typeWebP, 48, 48, ""},
		{"ico of a bitmap", testICO(32, 32, bmp), typeICO, 32, 32, ""},
		{"ico of a png", testICO(0, 0, testPNG(t, 256, 256)), typeICO, 256, 256, ""},
		{"png too wide", testPNG(t, 1025, 10), "", 0, 0, "1025×10"},
		{"webp too tall", testWebP("VP8X", 10, 4000), "", 0, 0, "10×4000"},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "", 0, 0, "SVG is refused"},
		{"svg after an xml declaration", []byte("\xef\xbb\xbf  <?xml version=\"1.0\"?>\n<!-- x --><svg/>"), "", 0, 0, "SVG is refused"},
		{"html named png", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), "", 0, 0, "text/html"},
		{"text", []byte("just words"), "", 0, 0, "text/plain"},
		{"gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "", 0, 0, "image/gif"},
		{"empty", nil, "", 0, 0, "empty"},
		{"png header and garbage", append(testPNG(t, 8, 8)[:33], []byte("garbage")...), "", 0, 0, "not a valid PNG"},
		{"webp cut short", testWebP("VP8L", 10, 10)[:23], "", 0, 0, "not a valid WebP"},
		{"ico pointing outside", testICO(16, 16, bmp)[:30], "", 0, 0, "not a valid ICO"},
		{"a cursor", append([]byte{0, 0, 2, 0}, testICO(16, 16, bmp)[4:]...), "", 0, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ct, w, h, err := sniffImage(c.data)
			switch {
			case c.ct != "" && (err != nil || ct != c.ct || w != c.w || h != c.h):
				t.Fatalf("%s %d×%d %v, want %s %d×%d", ct, w, h, err, c.ct, c.w, c.h)
			case c.ct == "" && err == nil:
				t.Fatalf("accepted as %s %d×%d", ct, w, h)
			case c.ct == "" && !strings.Contains(err.Error(), c.reason):
				t.Fatalf("refused with %q, want %q", err, c.reason)
			}
		})
	}
}

// FuzzSniffImage: any bytes are an image of a type the pages show within
// the limits, or refused; the WebP and ICO readers never read past the
// end of the file.
func FuzzSniffImage(f *testing.F) {
	f.Add(testPNG(f, 4, 4))
	f.Add(testWebP("VP8L", 3, 3))
	f.Add(testWebP("VP8X", 3, 3))
	f.Add(testWebP("VP8 ", 3, 3))
	f.Add(testICO(16, 16, make([]byte, 40)))
	f.Add(testICO(0, 0, testPNG(f, 2, 2)))
	f.Add([]byte("<svg/>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ct, w, h, err := sniffImage(data)
		if err != nil {
			return
		}
		if w < 1 || h < 1 || w > MaxAssetDimension || h > MaxAssetDimension {
			t.Fatalf("accepted %d×%d", w, h)
		}
		switch ct {
		case typePNG, typeJPEG, typeWebP, typeICO:
		default:
			t.Fatalf("accepted as %s", ct)
		}
	})
}
