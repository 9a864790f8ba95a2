package ui

import (
	"context"
	"html"
	"io"
	"strings"

	"github.com/a-h/templ"
)

// Frame is what every page of a realm shows around its content: the
// realm's name and logo, and its look. Pages rendered outside a realm (the
// welcome page) have the zero Frame.
type Frame struct {
	RealmName  string // the realm's displayName, else its name
	LogoURL    string
	FaviconURL string
	Theme      string   // a preset name, set as data-theme on <html>
	Vars       []CSSVar // overrides of the preset's custom properties
}

// CSSVar is one custom property of the theme. Values reach this point
// already validated (hex colors, a plain font list); they are escaped
// again on output all the same.
type CSSVar struct{ Name, Value string }

type frameKey struct{}

// WithFrame gives the pages rendered with ctx their realm's frame.
func WithFrame(ctx context.Context, f Frame) context.Context {
	return context.WithValue(ctx, frameKey{}, f)
}

func frameFrom(ctx context.Context) Frame {
	f, _ := ctx.Value(frameKey{}).(Frame)
	return f
}

// themeStyle writes the realm's overrides as a nonce-bearing style
// element, the only inline style the page policy allows. They are set on
// body so that they win over the preset's values on the root element.
func themeStyle(vars []CSSVar) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		if len(vars) == 0 {
			return nil
		}
		var b strings.Builder
		b.WriteString(`<style nonce="` + html.EscapeString(templ.GetNonce(ctx)) + `">body{`)
		for _, v := range vars {
			b.WriteString(cssSafe(v.Name) + ":" + cssSafe(v.Value) + ";")
		}
		b.WriteString("}</style>")
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// cssSafe keeps a declaration from closing its block or the element.
func cssSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '<', '>', '{', '}', ';', '\\', '\n', '\r':
			return -1
		}
		return r
	}, s)
}
