package themes

import (
	"errors"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apperr"
)

func TestParseColor(t *testing.T) {
	for _, c := range []struct {
		in   string
		want rgb // ignored when err is set
		err  string
	}{
		{"#fff", rgb{1, 1, 1}, ""},
		{"#0B5FFF", rgb{11.0 / 255, 95.0 / 255, 1}, ""},
		{"rgb(255, 0, 0)", rgb{1, 0, 0}, ""},
		{"rgb(0 128 0)", rgb{0, 128.0 / 255, 0}, ""},
		{"hsl(0, 100%, 50%)", rgb{1, 0, 0}, ""},
		{"hsl(240deg 100% 50%)", rgb{0, 0, 1}, ""},
		{"HSL(120 100% 25%)", rgb{0, 0.5, 0}, ""},
		{"#ffff", rgb{}, "3 or 6 digits"},
		{"#11223344", rgb{}, "no alpha"},
		{"#ggg", rgb{}, "not a hex"},
		{"red", rgb{}, "must be a colour"},
		{"rgb(256, 0, 0)", rgb{}, "0 to 255"},
		{"rgb(1, 2)", rgb{}, "three values"},
		{"rgb(1 2 3 / 50%)", rgb{}, "without alpha"},
		{"rgba(1, 2, 3, 0.5)", rgb{}, "must be a colour"},
		{"hsl(400, 1%, 1%)", rgb{}, "hue"},
		{"hsl(10, 10, 10%)", rgb{}, "percent"},
		{"#fff;}body{background:url(x)", rgb{}, ""},
		{"rgb(1,2,3)}</style><script>", rgb{}, ""},
		{"var(--x)", rgb{}, "must be a colour"},
		{strings.Repeat("#", 41), rgb{}, "longer"},
	} {
		got, err := parseColor(c.in)
		wantErr := c.err != "" || strings.ContainsAny(c.in, ";<{")
		switch {
		case wantErr && err == nil:
			t.Errorf("%q: accepted as %v", c.in, got)
		case wantErr && !strings.Contains(err.Error(), c.err):
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		case !wantErr && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case !wantErr && (math.Abs(got.r-c.want.r) > 0.003 || math.Abs(got.g-c.want.g) > 0.003 || math.Abs(got.b-c.want.b) > 0.003):
			t.Errorf("%q = %v, want %v", c.in, got, c.want)
		}
	}
}

// The contrast ratio is WCAG's: black on white is 21:1, a colour on
// itself 1:1, and #767676 on white just above 4.5:1.
func TestContrast(t *testing.T) {
	white, _ := parseColor("#ffffff")
	for _, c := range []struct {
		fg   string
		want float64
	}{{"#000000", 21}, {"#ffffff", 1}, {"#767676", 4.54}} {
		fg, _ := parseColor(c.fg)
		if got := contrast(fg, white); math.Abs(got-c.want) > 0.01 {
			t.Errorf("%s on white: %.3f, want %.2f", c.fg, got, c.want)
		}
	}
}

func TestCheckLengthAndFont(t *testing.T) {
	for _, c := range []struct {
		check func(string) error
		in    string
		ok    bool
	}{
		{checkLength, "0", true},
		{checkLength, "8px", true},
		{checkLength, "0.5rem", true},
		{checkLength, "1.25em", true},
		{checkLength, "64px", true},
		{checkLength, "65px", false},
		{checkLength, "5rem", false},
		{checkLength, "-1px", false},
		{checkLength, "10%", false},
		{checkLength, "calc(1px + 2px)", false},
		{checkLength, "1px;color:red", false},
		{checkLength, "8", false},
		{checkFont, `Inter, "Segoe UI", sans-serif`, true},
		{checkFont, "Georgia, serif", true},
		{checkFont, "Source Sans Pro", true},
		{checkFont, `'Open Sans'`, true},
		{checkFont, "Inter,,serif", false},
		{checkFont, `"Inter`, false},
		{checkFont, `"a";}body{x:y`, false},
		{checkFont, "Inter; color: red", false},
		{checkFont, `url(x)`, false},
		{checkFont, "Inter\\,serif", false},
		{checkFont, strings.Repeat("a,", 9) + "a", false},
	} {
		if err := c.check(c.in); (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok=%v", c.in, err, c.ok)
		}
	}
}

// An unknown token is refused as an unknown field naming it; a value of
// the wrong kind as an invalid one.
func TestCheckTokens(t *testing.T) {
	for _, c := range []struct {
		name        string
		tokens      Tokens
		code, field string
	}{
		{"all good", Tokens{Colors: map[string]string{"primary": "#0b5fff"}, Fonts: map[string]string{"heading": "Georgia, serif"},
			Radius: map[string]string{"card": "16px"}, Spacing: map[string]string{"field": "1rem"}}, "", ""},
		{"an unknown colour", Tokens{Colors: map[string]string{"prmary": "#000"}}, "unknown_field", "tokens.colors.prmary"},
		{"an unknown radius", Tokens{Radius: map[string]string{"button": "2px"}}, "unknown_field", "tokens.radius.button"},
		{"a colour that is not", Tokens{Colors: map[string]string{"text": "black"}}, "invalid_field", "tokens.colors.text"},
		{"a length in a font", Tokens{Fonts: map[string]string{"body": "12px"}}, "invalid_field", "tokens.fonts.body"},
	} {
		err := checkTokens(c.tokens)
		var ae *apperr.Error
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code != "" && (!errors.As(err, &ae) || string(ae.Code) != c.code || ae.Field != c.field):
			t.Errorf("%s: %v, want %s on %s", c.name, err, c.code, c.field)
		}
	}
}

// Every preset reads well by the rules a theme is held to, and a theme
// that breaks one is refused on the token it set.
func TestContrastRules(t *testing.T) {
	for _, p := range presets {
		all := Tokens{Colors: p.Tokens.Colors}
		if err := checkContrast(Preset{Name: "none"}, all); err != nil {
			t.Errorf("preset %s: %v", p.Name, err)
		}
	}
	idenplane, _ := presetNamed("idenplane")
	for _, c := range []struct {
		colors map[string]string
		field  string
	}{
		{map[string]string{"primary": "#0b5fff"}, ""},
		{map[string]string{"primary": "#0b5fff", "primaryText": "#ffffff"}, ""},
		{map[string]string{"primaryText": "#3b82f6"}, "tokens.colors.primaryText"},
		{map[string]string{"primary": "#93c5fd"}, "tokens.colors.primary"},
		{map[string]string{"card": "#0f172a"}, "tokens.colors.card"},
		{map[string]string{"text": "#cccccc"}, "tokens.colors.text"},
		{map[string]string{"link": "#ffff00"}, "tokens.colors.link"},
		{map[string]string{"focus": "#eeeeee"}, "tokens.colors.focus"},
	} {
		err := checkContrast(idenplane, Tokens{Colors: c.colors})
		var ae *apperr.Error
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%v: %v", c.colors, err)
		case c.field != "" && (!errors.As(err, &ae) || ae.Field != c.field || !strings.Contains(ae.Message, "contrast")):
			t.Errorf("%v: %v, want a refusal of %s", c.colors, err, c.field)
		}
	}
}

// cssBlock finds a rule's declarations in the stylesheet.
var cssDecl = regexp.MustCompile(`(--[a-z-]+):\s*([^;]+);`)

// The presets' tokens are the stylesheet's values, so that what the
// built-in endpoint shows is what the pages wear; and every token's
// property is one the stylesheet reads.
func TestPresetsAreTheStylesheets(t *testing.T) {
	b, err := os.ReadFile("../../assets/static/idenplane.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	block := func(selector string) map[string]string {
		i := strings.Index(css, selector+" {")
		if i < 0 {
			t.Fatalf("no %s in the stylesheet", selector)
		}
		body := css[i : i+strings.Index(css[i:], "}")]
		out := map[string]string{}
		for _, m := range cssDecl.FindAllStringSubmatch(body, -1) {
			out[m[1]] = strings.TrimSpace(m[2])
		}
		return out
	}
	root := block(":root")
	for _, p := range presets {
		props := root
		if p.Name != "idenplane" {
			props = map[string]string{}
			for k, v := range root {
				props[k] = v
			}
			for k, v := range block(`:root[data-theme="` + p.Name + `"]`) {
				props[k] = v
			}
		}
		for _, tk := range registry {
			if tk.Kind != kindColor && tk.Property != "--font" {
				continue
			}
			want, has := props[tk.Property]
			got := p.Tokens.group(tk.Group)[tk.Name]
			if got != want || (got == "") == has {
				t.Errorf("preset %s: %s.%s is %q, the stylesheet's %s %q", p.Name, tk.Group, tk.Name, got, tk.Property, want)
			}
		}
	}
	for _, tk := range registry {
		if !strings.Contains(css, "var("+tk.Property) {
			t.Errorf("token %s.%s sets %s, which the stylesheet never reads", tk.Group, tk.Name, tk.Property)
		}
		if tk.Kind == kindLength {
			for _, p := range presets {
				if !strings.Contains(css, "var("+tk.Property+", "+p.Tokens.group(tk.Group)[tk.Name]+")") {
					t.Errorf("token %s.%s: the stylesheet's default is not the presets' %s", tk.Group, tk.Name, p.Tokens.group(tk.Group)[tk.Name])
				}
			}
		}
	}
}

// FuzzTokens: a value a token check accepts can never leave its
// declaration in the style element: no character that ends it, opens a
// block, or closes the element.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"#fff", "rgb(1 2 3)", "hsl(10deg, 50%, 50%)", "8px", "0.5rem", `Inter, "Segoe UI", sans-serif`,
		"#fff;}", `"a</style>"`, "1e3px", "hsl(1e2, 1%, 1%)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, colorErr := parseColor(s)
		for name, err := range map[string]error{"colour": colorErr, "font": checkFont(s), "length": checkLength(s)} {
			if err == nil && strings.ContainsAny(s, ";{}<>\\\n\r") {
				t.Errorf("%s %q accepted", name, s)
			}
		}
	})
}
