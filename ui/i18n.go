package ui

import (
	"bufio"
	"context"
	"embed"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Messages of the hosted pages live in catalogues, one per language:
// messages/<tag>.properties, "key = text" lines. English is complete;
// another catalogue may leave keys out, and those fall back to English.

//go:embed messages/*.properties
var catalogueFiles embed.FS

// DefaultLocale is the catalogue every other one falls back to.
const DefaultLocale = "en"

// Catalogues holds every embedded message catalogue by language tag.
type Catalogues struct {
	byTag map[string]map[string]string
	tags  []string
}

// LoadCatalogues parses the embedded catalogues. A malformed line is a
// build defect, so it is an error here and a failed test.
func LoadCatalogues() (*Catalogues, error) {
	entries, err := catalogueFiles.ReadDir("messages")
	if err != nil {
		return nil, err
	}
	c := &Catalogues{byTag: map[string]map[string]string{}}
	for _, e := range entries {
		tag := strings.TrimSuffix(e.Name(), ".properties")
		b, err := catalogueFiles.ReadFile(path.Join("messages", e.Name()))
		if err != nil {
			return nil, err
		}
		m, err := parseCatalogue(string(b))
		if err != nil {
			return nil, fmt.Errorf("catalogue %s: %w", e.Name(), err)
		}
		c.byTag[tag] = m
		c.tags = append(c.tags, tag)
	}
	if _, ok := c.byTag[DefaultLocale]; !ok {
		return nil, fmt.Errorf("no %s catalogue", DefaultLocale)
	}
	slices.Sort(c.tags)
	return c, nil
}

func parseCatalogue(s string) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d: want key = text", n)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("line %d: %s defined twice", n, k)
		}
		m[k] = v
	}
	return m, sc.Err()
}

// Tags lists the languages there are catalogues for.
func (c *Catalogues) Tags() []string { return slices.Clone(c.tags) }

// Keys lists the keys of a catalogue, for tests that check coverage.
func (c *Catalogues) Keys(tag string) []string {
	var keys []string
	for k := range c.byTag[tag] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Negotiate picks the catalogue for a request: the first of the caller's
// explicit choices (ui_locales, a space-separated list, or the locale
// cookie) that is present, else the best Accept-Language match, else
// English. A regional tag such as de-CH falls back to its language.
func (c *Catalogues) Negotiate(explicit []string, acceptLanguage string) string {
	if tag := c.Preferred(explicit, acceptLanguage); tag != "" {
		return tag
	}
	return DefaultLocale
}

// Preferred is what Negotiate picks when the caller asked for a language
// there is a catalogue for, else "": a mail then falls back to the realm's
// language rather than to English.
func (c *Catalogues) Preferred(explicit []string, acceptLanguage string) string {
	for _, pref := range explicit {
		for _, tag := range strings.Fields(pref) {
			if t := c.match(tag); t != "" {
				return t
			}
		}
	}
	type ranked struct {
		tag string
		q   float64
	}
	var prefs []ranked
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		if tag != "" && q > 0 {
			prefs = append(prefs, ranked{tag, q})
		}
	}
	slices.SortStableFunc(prefs, func(a, b ranked) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return 0
	})
	for _, p := range prefs {
		if t := c.match(p.tag); t != "" {
			return t
		}
	}
	return ""
}

// match is the catalogue for tag, compared without regard to case as
// language tags are: the tag's own (pt-br is pt-BR), else its language's
// (de-CH is de), else one of the same language in another region (pt is
// pt-BR).
func (c *Catalogues) match(tag string) string {
	tag = strings.ReplaceAll(tag, "_", "-")
	base, _, _ := strings.Cut(tag, "-")
	for _, same := range []func(t string) bool{
		func(t string) bool { return strings.EqualFold(t, tag) },
		func(t string) bool { return strings.EqualFold(t, base) },
		func(t string) bool { l, _, _ := strings.Cut(t, "-"); return strings.EqualFold(l, base) },
	} {
		if i := slices.IndexFunc(c.tags, same); i >= 0 {
			return c.tags[i]
		}
	}
	return ""
}

// Localizer renders the messages of one language.
type Localizer struct {
	Tag string
	c   *Catalogues
}

// Localizer returns the localizer of a negotiated tag.
func (c *Catalogues) Localizer(tag string) *Localizer {
	if _, ok := c.byTag[tag]; !ok {
		tag = DefaultLocale
	}
	return &Localizer{Tag: tag, c: c}
}

// T is the text of key, with {0}, {1}… replaced by args. A key no
// catalogue has comes back as it is, so a message built at run time (a
// provider's error, say) still shows.
func (l *Localizer) T(key string, args ...any) string {
	s, ok := l.c.byTag[l.Tag][key]
	if !ok {
		if s, ok = l.c.byTag[DefaultLocale][key]; !ok {
			s = key
		}
	}
	for i, arg := range args {
		s = strings.ReplaceAll(s, "{"+strconv.Itoa(i)+"}", fmt.Sprint(arg))
	}
	return s
}

type localizerKey struct{}

// WithLocalizer gives the pages rendered with ctx their language.
func WithLocalizer(ctx context.Context, l *Localizer) context.Context {
	return context.WithValue(ctx, localizerKey{}, l)
}

// T translates key in the language of ctx; in a context without one (a
// test rendering a component directly) it answers the key.
func T(ctx context.Context, key string, args ...any) string {
	if l, ok := ctx.Value(localizerKey{}).(*Localizer); ok {
		return l.T(key, args...)
	}
	return key
}

// Lang is the language tag of ctx, for the html element.
func Lang(ctx context.Context) string {
	if l, ok := ctx.Value(localizerKey{}).(*Localizer); ok {
		return l.Tag
	}
	return DefaultLocale
}
