package ui

import (
	"slices"
	"testing"
)

// FuzzNegotiate fuzzes the language choice from ui_locales (or the locale
// cookie) and Accept-Language. Invariants: the answer is a catalogue the
// server has, and the same for the same input.
func FuzzNegotiate(f *testing.F) {
	c, err := LoadCatalogues()
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range [][2]string{
		{"", ""}, {"de", ""}, {"fr-CA en", ""}, {"", "de-CH,de;q=0.9,en;q=0.8"}, {"", "*;q=0.5, fr;q=1.0"},
		{"", "en;q=2, de;q=-1, fr;q=NaN"}, {"", "de;q=0.5;x=1,,,"}, {"xx", "zz-ZZ"}, {"DE_at", ""}, {"", "de;q=1e-400"},
		{"\x00", "\xff;q=0.1"},
	} {
		f.Add(in[0], in[1])
	}
	tags := c.Tags()
	f.Fuzz(func(t *testing.T, explicit, acceptLanguage string) {
		got := c.Negotiate(Offer{}, []string{explicit}, acceptLanguage)
		if !slices.Contains(tags, got) && got != DefaultLocale {
			t.Fatalf("Negotiate(%q, %q) = %q, not one of %q", explicit, acceptLanguage, got, tags)
		}
		if again := c.Negotiate(Offer{}, []string{explicit}, acceptLanguage); again != got {
			t.Fatalf("Negotiate(%q, %q) = %q, then %q", explicit, acceptLanguage, got, again)
		}
	})
}
