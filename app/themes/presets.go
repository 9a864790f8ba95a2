package themes

import "slices"

// Preset is a built-in look of the hosted pages, set as data-theme on
// their root element; a theme starts from one and changes its tokens.
// Its tokens are the stylesheet's values (assets/static/idenplane.css),
// which TestPresetsAreTheStylesheets keeps in step.
type Preset struct {
	Name   string `json:"name"`
	Tokens Tokens `json:"tokens"`
}

// DefaultPreset is the look of a realm that has chosen none.
const DefaultPreset = "idenplane"

const systemFonts = `system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`

// shared are the tokens every preset has alike: the stylesheet's
// defaults where each is used.
var shared = Tokens{
	Fonts:   map[string]string{"body": systemFonts},
	Radius:  map[string]string{"control": "0.4rem", "card": "0.75rem"},
	Spacing: map[string]string{"card": "2rem", "field": "0.75rem"},
}

func preset(name string, colors map[string]string) Preset {
	t := shared.clone()
	t.Colors = colors
	return Preset{Name: name, Tokens: t}
}

// presets are the built-in looks. A preset without a link colour links
// in its primary colour.
var presets = []Preset{
	preset("idenplane", map[string]string{"primary": "#2563eb", "primaryText": "#ffffff", "background": "#f8fafc", "text": "#0f172a", "muted": "#475569", "card": "#ffffff", "border": "#cbd5e1",
		"error": "#b91c1c", "focus": "#1d4ed8"}),
	preset("idenplane-dark", map[string]string{"primary": "#60a5fa", "primaryText": "#0b1220", "background": "#0b1220", "text": "#e2e8f0", "muted": "#a8b3c4", "card": "#111a2e", "border": "#334155",
		"error": "#fca5a5", "focus": "#93c5fd"}),
	preset("high-contrast", map[string]string{"primary": "#000000", "primaryText": "#ffffff", "background": "#ffffff", "text": "#000000", "muted": "#000000", "link": "#0000ee", "card": "#ffffff",
		"border": "#000000", "error": "#a00000", "focus": "#000000"}),
}

// Presets lists the built-in looks with their tokens.
func Presets() []Preset {
	out := make([]Preset, len(presets))
	for i, p := range presets {
		out[i] = Preset{Name: p.Name, Tokens: p.Tokens.clone()}
	}
	return out
}

// PresetNames lists the built-in looks' names.
func PresetNames() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.Name
	}
	return out
}

// IsPreset says whether name is a built-in look.
func IsPreset(name string) bool {
	return slices.ContainsFunc(presets, func(p Preset) bool { return p.Name == name })
}

func presetNamed(name string) (Preset, bool) {
	i := slices.IndexFunc(presets, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return Preset{}, false
	}
	return presets[i], true
}
