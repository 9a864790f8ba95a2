package ui

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testCatalogues builds catalogues from in-memory files, each the English
// keys with texts of its own, to test matching against tags the embedded
// catalogues may lack.
func testCatalogues(t *testing.T, tags ...string) *Catalogues {
	t.Helper()
	files := map[string]string{"en.properties": "k = English\n"}
	for _, tag := range tags {
		files[tag+".properties"] = "k = " + tag + "\n"
	}
	c, err := buildCatalogues(files)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNegotiate(t *testing.T) {
	c := testCatalogues(t, "de", "fr", "pt-BR", "zh-CN", "ar", "nl")
	for _, tc := range []struct {
		name     string
		offer    Offer
		explicit []string
		accept   string
		want     string
	}{
		{"nothing asked", Offer{}, nil, "", "en"},
		{"accept-language", Offer{}, nil, "de", "de"},
		{"region falls back to language", Offer{}, nil, "de-CH,en;q=0.5", "de"},
		{"quality order", Offer{}, nil, "en;q=0.4, de;q=0.8", "de"},
		{"unknown languages", Offer{}, nil, "sv, ja;q=0.9", "en"},
		{"q=0 excluded", Offer{}, nil, "de;q=0, sv", "en"},
		{"malformed quality ignored", Offer{}, nil, "de;q=x, en", "en"},
		{"wildcard is no choice", Offer{}, nil, "*, de;q=0.5", "de"},
		{"ui_locales first match wins over header", Offer{}, []string{"sv de"}, "en", "de"},
		{"ui_locales unknown falls to header", Offer{}, []string{"sv"}, "de", "de"},
		{"underscore tag", Offer{}, []string{"de_AT"}, "", "de"},
		{"case-insensitive", Offer{}, []string{"DE"}, "", "de"},
		{"pt to pt-BR", Offer{}, []string{"pt"}, "", "pt-BR"},
		{"pt-PT to pt-BR", Offer{}, nil, "pt-PT", "pt-BR"},
		{"zh to zh-CN", Offer{}, nil, "zh", "zh-CN"},
		{"zh-Hans to zh-CN", Offer{}, []string{"zh-Hans"}, "", "zh-CN"},
		{"lowercase region", Offer{}, []string{"pt-br"}, "", "pt-BR"},
		{"zh-TW is not zh-CN", Offer{}, nil, "zh-TW, fr;q=0.5", "fr"},
		{"no stand-in language", Offer{}, nil, "af", "en"},
		{"arabic of a region", Offer{}, nil, "ar-EG", "ar"},
		{"realm default last", Offer{Default: "fr"}, nil, "sv", "fr"},
		{"realm default after the browser", Offer{Default: "fr"}, nil, "de", "de"},
		{"ui_locales before realm default", Offer{Default: "fr"}, []string{"nl"}, "", "nl"},
		{"realm offers only some", Offer{Supported: []string{"fr", "de"}, Default: "fr"}, []string{"nl"}, "en", "fr"},
		{"realm offers en among some", Offer{Supported: []string{"en", "de"}}, []string{"nl"}, "en", "en"},
		{"realm default not offered", Offer{Supported: []string{"de"}}, nil, "", "de"},
		{"realm default without catalogue", Offer{Default: "sv"}, nil, "", "en"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Negotiate(tc.offer, tc.explicit, tc.accept); got != tc.want {
				t.Fatalf("Negotiate(%+v, %q, %q) = %q, want %q", tc.offer, tc.explicit, tc.accept, got, tc.want)
			}
		})
	}
}

func TestDirection(t *testing.T) {
	for tag, want := range map[string]string{"ar": "rtl", "he": "rtl", "fa": "rtl", "ur": "rtl", "ar-EG": "rtl",
		"en": "ltr", "de": "ltr", "zh-CN": "ltr", "ja": "ltr", "pt-BR": "ltr", "": "ltr"} {
		if got := Direction(tag); got != want {
			t.Errorf("Direction(%q) = %q, want %q", tag, got, want)
		}
	}
	ctx := WithLocalizer(context.Background(), testCatalogues(t, "ar").Localizer("ar"))
	if Dir(ctx) != "rtl" || Lang(ctx) != "ar" {
		t.Fatalf("context of ar: dir %q lang %q", Dir(ctx), Lang(ctx))
	}
}

func TestLocalizer(t *testing.T) {
	c, err := LoadCatalogues()
	if err != nil {
		t.Fatal(err)
	}
	de := c.Localizer("de")
	if got := de.T("consent.asksFor", "Shop"); got != "Shop bittet um:" {
		t.Fatalf("German with argument: %q", got)
	}
	if got := c.Localizer("xx").T("login.password"); got != "Password" {
		t.Fatalf("unknown tag falls back to English: %q", got)
	}
	if got := de.T("SMTP said 550"); got != "SMTP said 550" {
		t.Fatalf("run-time text must pass through: %q", got)
	}
	ctx := WithLocalizer(context.Background(), de)
	if T(ctx, "login.password") != "Passwort" || Lang(ctx) != "de" || Dir(ctx) != "ltr" {
		t.Fatalf("context localizer: %q %q", T(ctx, "login.password"), Lang(ctx))
	}
}

func TestParseCatalogueRefusesDefects(t *testing.T) {
	for _, bad := range []string{"no equals sign", "= no key", "a = 1\na = 2", `a = \u12`, `a = \uzzzz`} {
		if _, err := parseCatalogue(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestParseCatalogueReadsProperties: what translation platforms write in
// a Java properties file reads as they mean it.
func TestParseCatalogueReadsProperties(t *testing.T) {
	m, err := parseCatalogue("# comment\n! comment too\n" +
		"a = l'ami de {0}\n" +
		"b: colon\n" +
		"c=no spaces\n" +
		"d = one \\\n    two\n" +
		"e = \\u00e9t\\u00e9 \\= \\: \\# \\\\ \\n\n" +
		"f = \\ lead\n" +
		"g = ends in a backslash \\\\\n" +
		"h = مرحبا\n")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "l'ami de {0}", "b": "colon", "c": "no spaces", "d": "one two",
		"e": "été = : # \\ \n", "f": " lead", "g": `ends in a backslash \`, "h": "مرحبا"} {
		if m[k] != want {
			t.Errorf("%s = %q, want %q", k, m[k], want)
		}
	}
	if len(m) != 8 {
		t.Errorf("%d keys: %q", len(m), m)
	}
}

// TestCataloguesComplete: every catalogue has every English key, no key
// English lacks, and the same placeholders for each, so that no page
// mixes languages or loses an argument. It checks whatever catalogues
// there are, so a new language is checked the day it is added.
func TestCataloguesComplete(t *testing.T) {
	c, err := LoadCatalogues()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"en", "de", "fr", "es", "it", "nl", "pl"} {
		if !slices.Contains(c.Tags(), want) {
			t.Errorf("no %s catalogue", want)
		}
	}
	if !slices.Equal(c.Tags(), sorted(CatalogueTags())) {
		t.Errorf("CatalogueTags %q, loaded %q", CatalogueTags(), c.Tags())
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// TestCatalogueDefectsRefused: the check behind TestCataloguesComplete
// names each kind of defect.
func TestCatalogueDefectsRefused(t *testing.T) {
	en := "a = A {0}\nb = B\n"
	for _, tc := range []struct{ name, fr, want string }{
		{"missing key", "a = A {0}\n", "catalogue fr: no b"},
		{"extra key", "a = A {0}\nb = B\nc = C\n", "catalogue fr: c is not an English key"},
		{"lost placeholder", "a = A\nb = B\n", "catalogue fr: a has placeholders [], English [{0}]"},
		{"other placeholder", "a = A {1}\nb = B\n", "catalogue fr: a has placeholders [{1}], English [{0}]"},
		{"extra placeholder", "a = A {0}\nb = B {0}\n", "catalogue fr: b has placeholders [{0}], English []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildCatalogues(map[string]string{"en.properties": en, "fr.properties": tc.fr})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := buildCatalogues(map[string]string{"en.properties": en, "pt_BR.properties": en}); err == nil ||
		!strings.Contains(err.Error(), "canonical BCP 47 tag") {
		t.Fatalf("a file named pt_BR: %v", err)
	}
}

// keyUses finds the message keys written as literals in the templates and
// in the app's page code: T(ctx, "k"), Label/Hint/Error/Title fields,
// Alert("k"), page("k"), badPage("k"), message: "k".
var keyUses = regexp.MustCompile(`(?:T\(ctx, |Label: |Hint: |Alert\(|\.page\(|badPage\(|message: |Heading: |Message: |LinkText: |Title: )"([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)+)"`)

// TestEveryKeyHasEnglish: every key a page uses has English text.
func TestEveryKeyHasEnglish(t *testing.T) {
	c, err := LoadCatalogues()
	if err != nil {
		t.Fatal(err)
	}
	en := c.Keys(DefaultLocale)
	var files []string
	for _, pattern := range []string{"*.templ", "../app/*.go", "console/*.templ", "console/*.go", "../app/console/*.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	used := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range keyUses.FindAllStringSubmatch(string(b), -1) {
			used++
			if _, found := slices.BinarySearch(en, m[1]); !found {
				t.Errorf("%s: key %q has no English text", f, m[1])
			}
		}
	}
	if used < 50 {
		t.Fatalf("found only %d key uses: the pattern no longer matches the code", used)
	}
}

// The catalogues other than English are parsed at their first use, and
// one that departs from English (which TestCataloguesComplete rules out
// for the embedded ones) speaks English rather than mix languages.
func TestCataloguesParsedWhenUsed(t *testing.T) {
	files := map[string]string{"en.properties": "a = A {0}\nb = B\n", "fr.properties": "a = Un {0}\nb = Bé\n",
		"de.properties": "a = Ein\n"}
	c, err := newCatalogues(sorted(slices.Collect(maps.Keys(files))), func(tag string) (string, error) {
		return files[tag+".properties"], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	parsed := func() []string {
		var tags []string
		c.parsed.Range(func(k, _ any) bool { tags = append(tags, k.(string)); return true })
		return sorted(tags)
	}
	if got := parsed(); !slices.Equal(got, []string{"en"}) {
		t.Fatalf("parsed at start: %q, want English alone", got)
	}
	if got := c.Localizer("fr").T("a", 1); got != "Un 1" {
		t.Errorf("French: %q", got)
	}
	if got := c.Localizer("de").T("b"); got != "B" {
		t.Errorf("a German catalogue without b: %q, want the English text", got)
	}
	if got := parsed(); !slices.Equal(got, []string{"de", "en", "fr"}) {
		t.Errorf("parsed after use: %q", got)
	}
	if c.Check() == nil {
		t.Error("Check passed the German catalogue without b")
	}
}
