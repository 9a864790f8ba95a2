package themes

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// rgb is an opaque colour, each channel 0 to 1.
type rgb struct{ r, g, b float64 }

// maxColorLength bounds a colour's text: the longest legal one,
// "hsl(360deg, 100%, 100%)", is far shorter.
const maxColorLength = 40

// parseColor reads a colour token: #rgb, #rrggbb, rgb(r g b) or
// rgb(r, g, b) with channels 0 to 255, or hsl(h s% l%) or hsl(h, s%, l%)
// with the hue in degrees. Nothing else: no names, no alpha (a text's
// contrast with what is behind it must be known), no other functions,
// so a value can never close the declaration it sits in.
func parseColor(s string) (rgb, error) {
	if len(s) > maxColorLength {
		return rgb{}, fmt.Errorf("is longer than %d characters", maxColorLength)
	}
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(t, "#"):
		return parseHex(t[1:])
	case strings.HasPrefix(t, "rgb(") && strings.HasSuffix(t, ")"):
		args, err := colorArgs(t[len("rgb(") : len(t)-1])
		if err != nil {
			return rgb{}, err
		}
		var c [3]float64
		for i, a := range args {
			n, err := strconv.Atoi(a)
			if err != nil || n < 0 || n > 255 {
				return rgb{}, fmt.Errorf("rgb() takes three whole numbers from 0 to 255")
			}
			c[i] = float64(n) / 255
		}
		return rgb{c[0], c[1], c[2]}, nil
	case strings.HasPrefix(t, "hsl(") && strings.HasSuffix(t, ")"):
		args, err := colorArgs(t[len("hsl(") : len(t)-1])
		if err != nil {
			return rgb{}, err
		}
		h, err := number(strings.TrimSuffix(args[0], "deg"), 0, 360)
		if err != nil {
			return rgb{}, fmt.Errorf("hsl() takes a hue in degrees from 0 to 360")
		}
		var sl [2]float64
		for i, a := range args[1:] {
			p, ok := strings.CutSuffix(a, "%")
			v, err := number(p, 0, 100)
			if !ok || err != nil {
				return rgb{}, fmt.Errorf("hsl() takes a saturation and a lightness in percent from 0%% to 100%%")
			}
			sl[i] = v / 100
		}
		return hslToRGB(h, sl[0], sl[1]), nil
	}
	return rgb{}, fmt.Errorf("must be a colour: #rgb, #rrggbb, rgb(r g b) or hsl(h s%% l%%), opaque")
}

func parseHex(h string) (rgb, error) {
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	if len(h) != 6 {
		return rgb{}, fmt.Errorf("a hex colour has 3 or 6 digits (no alpha: the contrast of text on it must be known)")
	}
	n, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return rgb{}, fmt.Errorf("is not a hex colour")
	}
	return rgb{float64(n>>16) / 255, float64(n>>8&0xff) / 255, float64(n&0xff) / 255}, nil
}

// colorArgs splits the three arguments of rgb() or hsl(), separated by
// commas or by spaces alone.
func colorArgs(s string) ([]string, error) {
	var args []string
	if strings.Contains(s, ",") {
		for _, a := range strings.Split(s, ",") {
			args = append(args, strings.TrimSpace(a))
		}
	} else {
		args = strings.Fields(s)
	}
	if len(args) != 3 || strings.ContainsAny(s, "/") {
		return nil, fmt.Errorf("takes exactly three values, without alpha")
	}
	for _, a := range args {
		if a == "" {
			return nil, fmt.Errorf("takes exactly three values, without alpha")
		}
	}
	return args, nil
}

// number reads a plain decimal number within [min, max].
func number(s string, min, max float64) (float64, error) {
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' {
			return 0, fmt.Errorf("not a number")
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < min || v > max {
		return 0, fmt.Errorf("out of range")
	}
	return v, nil
}

func hslToRGB(h, s, l float64) rgb {
	c := (1 - math.Abs(2*l-1)) * s
	hp := math.Mod(h, 360) / 60
	x := c * (1 - math.Abs(math.Mod(hp, 2)-1))
	var r, g, b float64
	switch {
	case hp < 1:
		r, g = c, x
	case hp < 2:
		r, g = x, c
	case hp < 3:
		g, b = c, x
	case hp < 4:
		g, b = x, c
	case hp < 5:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	return rgb{r + m, g + m, b + m}
}

// luminance is the colour's relative luminance (WCAG 2.1).
func (c rgb) luminance() float64 {
	lin := func(v float64) float64 {
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.r) + 0.7152*lin(c.g) + 0.0722*lin(c.b)
}

// contrast is the contrast ratio of two colours (WCAG 2.1), 1 to 21.
func contrast(a, b rgb) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}
