package ui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/text/language"
)

// Messages of the hosted pages, the account pages, the console and the
// mails live in catalogues, one per language: messages/<tag>.properties
// (see parseCatalogue). English is the reference: every other catalogue
// has exactly its keys, with the same placeholders, or the tests fail
// (Check), so no page ever mixes two languages.

//go:embed messages/*.properties
var catalogueFiles embed.FS

// DefaultLocale is the reference catalogue, and the language of a realm
// that names no default of its own.
const DefaultLocale = "en"

// Catalogues holds every embedded message catalogue by language tag.
// English is parsed at once; every other catalogue at its first use, as a
// server speaks few of them: all of them parsed are 1.7 MB of heap kept
// for the server's life, and reading their files maps as much of the
// binary.
type Catalogues struct {
	tags     []string
	text     func(tag string) (string, error) // the file of a catalogue
	parsed   sync.Map                         // tag → map[string]string, English from the start
	parsing  sync.Mutex                       // held while a catalogue is parsed
	matchers sync.Map                         // Offer key → *offerMatcher
}

// LoadCatalogues finds the embedded catalogues and parses English. The
// others are checked against English when first used, and by
// TestCataloguesComplete in every build (Check).
func LoadCatalogues() (*Catalogues, error) {
	entries, err := catalogueFiles.ReadDir("messages")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return newCatalogues(names, func(tag string) (string, error) {
		b, err := catalogueFiles.ReadFile(path.Join("messages", tag+".properties"))
		return string(b), err
	})
}

// buildCatalogues parses catalogue files by file name and checks them all.
func buildCatalogues(files map[string]string) (*Catalogues, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	c, err := newCatalogues(names, func(tag string) (string, error) { return files[tag+".properties"], nil })
	if err != nil {
		return nil, err
	}
	return c, c.Check()
}

// newCatalogues are the catalogues of the files named, which text reads;
// English is parsed.
func newCatalogues(names []string, text func(tag string) (string, error)) (*Catalogues, error) {
	c := &Catalogues{text: text}
	for _, name := range names {
		tag := strings.TrimSuffix(name, ".properties")
		t, err := language.Parse(tag)
		if err != nil || t.String() != tag {
			return nil, fmt.Errorf("catalogue %s: the name must be a canonical BCP 47 tag", name)
		}
		c.tags = append(c.tags, tag)
	}
	slices.Sort(c.tags)
	if !slices.Contains(c.tags, DefaultLocale) {
		return nil, fmt.Errorf("no %s catalogue", DefaultLocale)
	}
	en, err := c.parse(DefaultLocale)
	if err != nil {
		return nil, fmt.Errorf("catalogue %s: %w", DefaultLocale, err)
	}
	c.parsed.Store(DefaultLocale, en)
	return c, nil
}

func (c *Catalogues) parse(tag string) (map[string]string, error) {
	text, err := c.text(tag)
	if err != nil {
		return nil, err
	}
	return parseCatalogue(text)
}

// Check parses every catalogue and lists how each departs from English.
func (c *Catalogues) Check() error {
	en := c.catalogue(DefaultLocale)
	var errs []error
	for _, tag := range c.tags {
		m, err := c.parse(tag)
		if err != nil {
			errs = append(errs, fmt.Errorf("catalogue %s: %w", tag, err))
			continue
		}
		errs = append(errs, compareCatalogue(tag, en, m)...)
	}
	return errors.Join(errs...)
}

// catalogue is the messages of tag, parsed at the first call; nil for a
// tag without a catalogue. One that departs from English, which Check
// finds in the tests of every build, is English's, so that no page mixes
// two languages.
func (c *Catalogues) catalogue(tag string) map[string]string {
	if m, ok := c.parsed.Load(tag); ok {
		return m.(map[string]string)
	}
	if !slices.Contains(c.tags, tag) {
		return nil
	}
	c.parsing.Lock()
	defer c.parsing.Unlock()
	if m, ok := c.parsed.Load(tag); ok {
		return m.(map[string]string)
	}
	en := c.catalogue(DefaultLocale)
	m, err := c.parse(tag)
	if err != nil || len(compareCatalogue(tag, en, m)) > 0 {
		m = en
	}
	c.parsed.Store(tag, m)
	return m
}

var placeholder = regexp.MustCompile(`\{[0-9]+\}`)

// compareCatalogue lists how a catalogue departs from English: a key
// missing, a key English lacks (a typo, which would never show), or
// other placeholders than English's.
func compareCatalogue(tag string, en, m map[string]string) []error {
	var errs []error
	for _, k := range sortedKeys(en) {
		v, ok := m[k]
		if !ok {
			errs = append(errs, fmt.Errorf("catalogue %s: no %s", tag, k))
			continue
		}
		if want, got := placeholders(en[k]), placeholders(v); !slices.Equal(want, got) {
			errs = append(errs, fmt.Errorf("catalogue %s: %s has placeholders %v, English %v", tag, k, got, want))
		}
	}
	for _, k := range sortedKeys(m) {
		if _, ok := en[k]; !ok {
			errs = append(errs, fmt.Errorf("catalogue %s: %s is not an English key", tag, k))
		}
	}
	return errs
}

func placeholders(s string) []string {
	p := placeholder.FindAllString(s, -1)
	slices.Sort(p)
	return slices.Compact(p)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Tags lists the languages there are catalogues for.
func (c *Catalogues) Tags() []string { return slices.Clone(c.tags) }

// Keys lists the keys of a catalogue, for tests that check coverage.
func (c *Catalogues) Keys(tag string) []string { return sortedKeys(c.catalogue(tag)) }

// Localizer renders the messages of one language.
type Localizer struct {
	Tag string
	c   *Catalogues
	// overrides are a theme's own texts for some keys, which win over the
	// catalogue's (WithOverrides).
	overrides map[string]string
}

// Localizer returns the localizer of a negotiated tag.
func (c *Catalogues) Localizer(tag string) *Localizer {
	if !slices.Contains(c.tags, tag) {
		tag = DefaultLocale
	}
	return &Localizer{Tag: tag, c: c}
}

// T is the text of key, with {0}, {1}… replaced by args. A key no
// catalogue has comes back as it is, so a message built at run time (a
// provider's error, say) still shows.
func (l *Localizer) T(key string, args ...any) string {
	s, ok := l.overrides[key]
	if !ok {
		s, ok = l.c.catalogue(l.Tag)[key]
	}
	if !ok {
		s = key
	}
	for i, arg := range args {
		s = strings.ReplaceAll(s, "{"+strconv.Itoa(i)+"}", fmt.Sprint(arg))
	}
	return s
}

// WithOverrides is l with texts of its own for some keys: a theme's
// message overrides, for the pages and mails rendered with it. The
// catalogues are shared by every render, so they are never changed; the
// overrides were checked against them when the theme was saved (keys the
// catalogues have, no placeholder English lacks).
func (l *Localizer) WithOverrides(texts map[string]string) *Localizer {
	if len(texts) == 0 {
		return l
	}
	return &Localizer{Tag: l.Tag, c: l.c, overrides: texts}
}

// Message is the text of key in the catalogue of tag, and whether it has
// one.
func (c *Catalogues) Message(tag, key string) (string, bool) {
	s, ok := c.catalogue(tag)[key]
	return s, ok
}

// Placeholders lists the distinct placeholders ({0}, {1}…) of a message,
// sorted.
func Placeholders(s string) []string { return placeholders(s) }

// Dir is the writing direction of the localizer's language.
func (l *Localizer) Dir() string { return Direction(l.Tag) }

// rtlScripts are the scripts written right to left that a catalogue may
// be in (Arabic for ar, fa, ur, ps; Hebrew for he, yi; Thaana; Syriac;
// N'Ko; Adlam; Hanifi Rohingya).
var rtlScripts = []string{"Arab", "Hebr", "Thaa", "Syrc", "Nkoo", "Adlm", "Rohg"}

// Direction is "rtl" for a language written right to left, else "ltr":
// the value of the dir attribute of a page or mail in that language.
func Direction(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return "ltr"
	}
	if s, _ := t.Script(); slices.Contains(rtlScripts, s.String()) {
		return "rtl"
	}
	return "ltr"
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

// Dir is the writing direction of ctx's language, for the html element.
func Dir(ctx context.Context) string { return Direction(Lang(ctx)) }

// CatalogueTags lists the languages there are catalogues for, without
// parsing them: what a realm's settings may name.
func CatalogueTags() []string {
	entries, _ := catalogueFiles.ReadDir("messages")
	tags := make([]string, 0, len(entries))
	for _, e := range entries {
		tags = append(tags, strings.TrimSuffix(e.Name(), ".properties"))
	}
	return tags
}
