package ui

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	c, err := LoadCatalogues()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		explicit []string
		accept   string
		want     string
	}{
		{"nothing asked", nil, "", "en"},
		{"accept-language", nil, "de", "de"},
		{"region falls back to language", nil, "de-CH,en;q=0.5", "de"},
		{"quality order", nil, "en;q=0.4, de;q=0.8", "de"},
		{"unknown languages", nil, "sv, fi;q=0.9", "en"},
		{"q=0 excluded", nil, "de;q=0, sv", "en"},
		{"malformed quality ignored", nil, "de;q=x, en", "en"},
		{"ui_locales first match wins over header", []string{"sv de"}, "en", "de"},
		{"ui_locales unknown falls to header", []string{"sv"}, "de", "de"},
		{"underscore tag", []string{"de_AT"}, "", "de"},
		{"case-insensitive", []string{"DE"}, "", "de"},
		{"regional catalogue", []string{"pt-br"}, "", "pt-BR"},
		{"regional catalogue by header", nil, "zh-CN,zh;q=0.9", "zh-CN"},
		{"language of a regional catalogue", nil, "pt-PT", "pt-BR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Negotiate(tc.explicit, tc.accept); got != tc.want {
				t.Fatalf("Negotiate(%q, %q) = %q, want %q", tc.explicit, tc.accept, got, tc.want)
			}
		})
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
	if T(ctx, "login.password") != "Passwort" || Lang(ctx) != "de" {
		t.Fatalf("context localizer: %q %q", T(ctx, "login.password"), Lang(ctx))
	}
}

func TestParseCatalogueRefusesDefects(t *testing.T) {
	for _, bad := range []string{"no equals sign", "= no key", "a = 1\na = 2"} {
		if _, err := parseCatalogue(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// keyUses finds the message keys written as literals in the templates and
// in the app's page code: T(ctx, "k"), Label/Hint/Error/Title fields,
// Alert("k"), page("k"), badPage("k"), message: "k".
var keyUses = regexp.MustCompile(`(?:T\(ctx, |Label: |Hint: |Alert\(|\.page\(|badPage\(|message: |Heading: |Message: |LinkText: |Title: )"([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)+)"`)

// TestEveryKeyHasEnglish: every key a page uses has English text, and no
// other catalogue has keys English lacks (a typo there would never show).
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
	for _, tag := range c.Tags() {
		for _, k := range c.Keys(tag) {
			if _, found := slices.BinarySearch(en, k); !found {
				t.Errorf("catalogue %s: key %q is not in English", tag, k)
			}
		}
	}
}
