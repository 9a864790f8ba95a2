package themes

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/ui"
)

// Tokens are a theme's design tokens by group and name. Each becomes a
// custom property of the pages' stylesheet (assets/static/idenplane.css),
// which is the only way a theme styles a page: no CSS of its own.
type Tokens struct {
	Colors  map[string]string `json:"colors,omitempty"`
	Fonts   map[string]string `json:"fonts,omitempty"`
	Radius  map[string]string `json:"radius,omitempty"`
	Spacing map[string]string `json:"spacing,omitempty"`
}

// tokenKind is what a token's value is.
type tokenKind string

const (
	kindColor  tokenKind = "color"
	kindFont   tokenKind = "font-family"
	kindLength tokenKind = "length"
)

// Token is one design token: its group and name in a theme, the custom
// property it sets, and the kind of value it takes.
type Token struct {
	Group    string    `json:"group"`
	Name     string    `json:"name"`
	Property string    `json:"property"`
	Kind     tokenKind `json:"kind"`
}

// Groups of tokens, as a theme's JSON names them.
const (
	groupColors  = "colors"
	groupFonts   = "fonts"
	groupRadius  = "radius"
	groupSpacing = "spacing"
)

// registry is every token there is. A token the stylesheet does not read
// would do nothing, so a theme naming another is refused.
var registry = []Token{
	{groupColors, "primary", "--primary", kindColor},
	{groupColors, "primaryText", "--primary-text", kindColor},
	{groupColors, "background", "--background", kindColor},
	{groupColors, "text", "--text", kindColor},
	{groupColors, "muted", "--muted", kindColor},
	{groupColors, "card", "--card", kindColor},
	{groupColors, "border", "--border", kindColor},
	{groupColors, "error", "--error", kindColor},
	{groupColors, "focus", "--focus", kindColor},
	{groupColors, "link", "--link", kindColor},
	{groupFonts, "body", "--font", kindFont},
	{groupFonts, "heading", "--font-heading", kindFont},
	{groupRadius, "control", "--radius", kindLength},
	{groupRadius, "card", "--radius-card", kindLength},
	{groupSpacing, "card", "--space-card", kindLength},
	{groupSpacing, "field", "--space-field", kindLength},
}

// group answers the map of t's group in tokens, nil for none.
func (t Tokens) group(name string) map[string]string {
	switch name {
	case groupColors:
		return t.Colors
	case groupFonts:
		return t.Fonts
	case groupRadius:
		return t.Radius
	case groupSpacing:
		return t.Spacing
	}
	return nil
}

// clone is a deep copy of t.
func (t Tokens) clone() Tokens {
	return Tokens{Colors: maps.Clone(t.Colors), Fonts: maps.Clone(t.Fonts), Radius: maps.Clone(t.Radius), Spacing: maps.Clone(t.Spacing)}
}

// vars are the custom properties of t, in the registry's order.
func (t Tokens) vars() []ui.CSSVar {
	var out []ui.CSSVar
	for _, tk := range registry {
		if v := t.group(tk.Group)[tk.Name]; v != "" {
			out = append(out, ui.CSSVar{Name: tk.Property, Value: v})
		}
	}
	return out
}

// Limits of the length tokens: a radius or a space past them would crowd
// the page out of its card.
const (
	maxLengthPx  = 64
	maxLengthRem = 4
)

var lengthPattern = regexp.MustCompile(`^(0|[0-9]{1,3}(\.[0-9]{1,3})?(px|rem|em))$`)

// checkLength reads a length token: 0, or a number of px (at most 64),
// rem or em (at most 4).
func checkLength(s string) error {
	m := lengthPattern.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("must be a length in px, rem or em, such as 8px or 0.5rem")
	}
	if s == "0" {
		return nil
	}
	v, _ := strconv.ParseFloat(s[:len(s)-len(m[3])], 64)
	if (m[3] == "px" && v > maxLengthPx) || (m[3] != "px" && v > maxLengthRem) {
		return fmt.Errorf("must be at most %dpx or %drem", maxLengthPx, maxLengthRem)
	}
	return nil
}

// Limits of a font token.
const (
	maxFontLength   = 200
	maxFontFamilies = 8
)

var (
	fontWord   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*$`)
	quotedFont = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 -]*$`)
)

// checkFont reads a font-family list: families separated by commas,
// each a quoted name ("Segoe UI") or words (Inter, sans-serif), letters,
// digits, spaces and hyphens only.
func checkFont(s string) error {
	if len(s) > maxFontLength {
		return fmt.Errorf("is longer than %d characters", maxFontLength)
	}
	families := strings.Split(s, ",")
	if len(families) > maxFontFamilies {
		return fmt.Errorf("names more than %d families", maxFontFamilies)
	}
	for _, f := range families {
		f = strings.Trim(f, " ") // spaces only: a line break would end the declaration's line
		switch {
		case len(f) >= 2 && (f[0] == '"' || f[0] == '\'') && f[len(f)-1] == f[0]:
			if !quotedFont.MatchString(f[1 : len(f)-1]) {
				return fmt.Errorf("a quoted family holds letters, digits, spaces and hyphens only: %s", f)
			}
		case f == "":
			return fmt.Errorf("must be a font-family list such as Inter, \"Segoe UI\", sans-serif")
		default:
			for _, w := range strings.Split(f, " ") {
				if !fontWord.MatchString(w) {
					return fmt.Errorf("must be a font-family list such as Inter, \"Segoe UI\", sans-serif; %q is not a family name", f)
				}
			}
		}
	}
	return nil
}

// checkTokens refuses an unknown token and a value of the wrong kind,
// naming the token as tokens.<group>.<name>.
func checkTokens(t Tokens) error {
	groups := []string{groupColors, groupFonts, groupRadius, groupSpacing}
	for _, g := range groups {
		m := t.group(g)
		for _, name := range slices.Sorted(maps.Keys(m)) {
			field := "tokens." + g + "." + name
			i := slices.IndexFunc(registry, func(tk Token) bool { return tk.Group == g && tk.Name == name })
			if i < 0 {
				return &apperr.Error{Status: 400, Code: apperr.CodeUnknownField, Field: field,
					Message: fmt.Sprintf("%s: not a design token; the %s are %s", field, g, strings.Join(tokenNames(g), ", "))}
			}
			v := m[name]
			var err error
			switch registry[i].Kind {
			case kindColor:
				_, err = parseColor(v)
			case kindFont:
				err = checkFont(v)
			case kindLength:
				err = checkLength(v)
			}
			if err != nil {
				return apperr.Field(field, "%s", err.Error())
			}
		}
	}
	return nil
}

func tokenNames(group string) []string {
	var out []string
	for _, tk := range registry {
		if tk.Group == group {
			out = append(out, tk.Name)
		}
	}
	return out
}

// contrastRule is a pair of colours of which one is read on the other:
// their contrast must reach min (WCAG 2.1 AA: 4.5 for text, 3 for a
// focus ring), so that a theme never makes a page unreadable.
type contrastRule struct {
	fg, bg string
	min    float64
}

var contrastRules = []contrastRule{
	{"text", "card", 4.5},
	{"muted", "card", 4.5},
	{"primaryText", "primary", 4.5}, // a button's label
	{"primary", "card", 4.5},        // a secondary button's label, links without a colour of their own
	{"link", "card", 4.5},
	{"error", "card", 4.5},
	{"focus", "card", 3},
}

// checkContrast checks the rules on the colours the pages will show: the
// theme's, else its preset's. The field at fault is the first of the
// pair the theme set.
func checkContrast(preset Preset, t Tokens) error {
	color := func(name string) (string, bool) {
		if v, ok := t.Colors[name]; ok {
			return v, true
		}
		return preset.Tokens.Colors[name], false
	}
	for _, r := range contrastRules {
		fgText, fgOwn := color(r.fg)
		bgText, bgOwn := color(r.bg)
		if fgText == "" || bgText == "" || (!fgOwn && !bgOwn) {
			continue // a colour the preset leaves to another (link), or the preset's own pair
		}
		fg, err1 := parseColor(fgText)
		bg, err2 := parseColor(bgText)
		if err1 != nil || err2 != nil {
			continue // refused by checkTokens
		}
		if c := contrast(fg, bg); c < r.min {
			field := "tokens.colors." + r.fg
			if !fgOwn {
				field = "tokens.colors." + r.bg
			}
			return apperr.Field(field, "%s on %s has a contrast of %.2f:1, below the %.1f:1 the pages need to stay readable (WCAG 2.1 AA)",
				r.fg, r.bg, c, r.min)
		}
	}
	return nil
}
