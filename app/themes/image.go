package themes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"net/http"
	"strings"
)

// Limits of an uploaded image: a logo or favicon, never a photograph.
const (
	MaxAssetBytes     = 512 << 10
	MaxAssetDimension = 1024
)

// The image types a theme may show, as the server sniffs them.
const (
	typePNG  = "image/png"
	typeJPEG = "image/jpeg"
	typeWebP = "image/webp"
	typeICO  = "image/x-icon"
)

// errSVG refuses SVG whatever it holds: an SVG document may carry
// scripts and links, and a theme's images are served from the server's
// own origin.
var errSVG = errors.New("SVG is refused: an SVG file may carry scripts, and the realm's images are served from this server; upload PNG, JPEG, WebP or ICO")

// sniffImage reads what an uploaded file is from its bytes alone (the
// name and the type the browser sent are the uploader's word, never
// trusted): a PNG, JPEG, WebP or ICO image, and its size. PNG and JPEG
// are decoded whole, so that only a real image is ever served; WebP and
// ICO have their headers read, which the standard library has no
// decoder of.
func sniffImage(data []byte) (contentType string, width, height int, err error) {
	if len(data) == 0 {
		return "", 0, 0, errors.New("the file is empty")
	}
	if looksLikeSVG(data) {
		return "", 0, 0, errSVG
	}
	switch ct := http.DetectContentType(data); ct {
	case typePNG:
		width, height, err = pngSize(data)
	case typeJPEG:
		width, height, err = jpegSize(data)
	case typeWebP:
		width, height, err = webpSize(data)
	case typeICO:
		width, height, err = icoSize(data)
	default:
		mt, _, _ := strings.Cut(ct, ";")
		return "", 0, 0, fmt.Errorf("the file holds %s, not a PNG, JPEG, WebP or ICO image (its content says what it is, not its name)", mt)
	}
	if err != nil {
		return "", 0, 0, err
	}
	if width < 1 || height < 1 || width > MaxAssetDimension || height > MaxAssetDimension {
		return "", 0, 0, fmt.Errorf("the image is %d×%d pixels; at most %d×%d are allowed", width, height, MaxAssetDimension, MaxAssetDimension)
	}
	return http.DetectContentType(data), width, height, nil
}

// looksLikeSVG finds an XML or SVG document, which DetectContentType
// reports as text.
func looksLikeSVG(data []byte) bool {
	head := data[:min(len(data), 1024)]
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.ToLower(bytes.TrimLeft(head, " \t\r\n"))
	return bytes.HasPrefix(head, []byte("<?xml")) || bytes.Contains(head, []byte("<svg"))
}

func pngSize(data []byte) (int, int, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, 0, fmt.Errorf("not a valid PNG image: %w", err)
	}
	if cfg.Width > MaxAssetDimension || cfg.Height > MaxAssetDimension {
		return cfg.Width, cfg.Height, nil // refused by the size, before a decode of it
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		return 0, 0, fmt.Errorf("not a valid PNG image: %w", err)
	}
	return cfg.Width, cfg.Height, nil
}

func jpegSize(data []byte) (int, int, error) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, 0, fmt.Errorf("not a valid JPEG image: %w", err)
	}
	if cfg.Width > MaxAssetDimension || cfg.Height > MaxAssetDimension {
		return cfg.Width, cfg.Height, nil
	}
	if _, err := jpeg.Decode(bytes.NewReader(data)); err != nil {
		return 0, 0, fmt.Errorf("not a valid JPEG image: %w", err)
	}
	return cfg.Width, cfg.Height, nil
}

var errWebP = errors.New("not a valid WebP image")

// webpSize reads a WebP file's RIFF header and its first chunk: the
// canvas of an extended file (VP8X), else the frame of a lossy (VP8) or
// lossless (VP8L) one.
func webpSize(data []byte) (int, int, error) {
	if len(data) < 20 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WEBP" {
		return 0, 0, errWebP
	}
	riff := binary.LittleEndian.Uint32(data[4:8])
	chunk := binary.LittleEndian.Uint32(data[16:20])
	if uint64(riff)+8 > uint64(len(data)) || riff < 4+8 || uint64(chunk)+20 > uint64(len(data)) {
		return 0, 0, errWebP
	}
	d := data[20:]
	switch string(data[12:16]) {
	case "VP8X":
		if chunk < 10 {
			return 0, 0, errWebP
		}
		w := int(d[4]) | int(d[5])<<8 | int(d[6])<<16
		h := int(d[7]) | int(d[8])<<8 | int(d[9])<<16
		return w + 1, h + 1, nil
	case "VP8L":
		if chunk < 5 || d[0] != 0x2f {
			return 0, 0, errWebP
		}
		bits := binary.LittleEndian.Uint32(d[1:5])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, nil
	case "VP8 ":
		if chunk < 10 || d[3] != 0x9d || d[4] != 0x01 || d[5] != 0x2a {
			return 0, 0, errWebP
		}
		return int(binary.LittleEndian.Uint16(d[6:8]) & 0x3fff), int(binary.LittleEndian.Uint16(d[8:10]) & 0x3fff), nil
	}
	return 0, 0, errWebP
}

var errICO = errors.New("not a valid ICO image")

// maxIconImages bounds the images of one ICO file.
const maxIconImages = 64

// icoSize reads an ICO file's directory (a 6-byte header, then a 16-byte
// entry per image) and answers the size of its largest image. Every entry
// must lie within the file. A PNG inside (as icons of 256 pixels and
// more are stored) is measured from its own header, and must decode.
func icoSize(data []byte) (int, int, error) {
	if len(data) < 6 || binary.LittleEndian.Uint16(data[0:2]) != 0 || binary.LittleEndian.Uint16(data[2:4]) != 1 {
		return 0, 0, errICO
	}
	n := int(binary.LittleEndian.Uint16(data[4:6]))
	dir := 6 + 16*n
	if n < 1 || n > maxIconImages || len(data) < dir {
		return 0, 0, errICO
	}
	width, height := 0, 0
	for i := range n {
		e := data[6+16*i : 6+16*(i+1)]
		w, h := int(e[0]), int(e[1])
		if w == 0 {
			w = 256
		}
		if h == 0 {
			h = 256
		}
		size, offset := binary.LittleEndian.Uint32(e[8:12]), binary.LittleEndian.Uint32(e[12:16])
		if size == 0 || uint64(offset) < uint64(dir) || uint64(offset)+uint64(size) > uint64(len(data)) {
			return 0, 0, errICO
		}
		img := data[offset : offset+size]
		if bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) {
			var err error
			if w, h, err = pngSize(img); err != nil {
				return 0, 0, errICO
			}
		}
		width, height = max(width, w), max(height, h)
	}
	return width, height, nil
}
