package ui

import (
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/language"
)

// Offer is what a realm offers: the languages its pages may speak (none
// listed: every catalogue) and the one they speak when the request asks
// for none of them (empty: English). Tags the catalogues do not have are
// ignored.
type Offer struct {
	Supported []string
	Default   string
}

// offerMatcher matches requested languages against an offer's catalogues.
type offerMatcher struct {
	tags     []string // catalogue tags, the fallback first
	matcher  language.Matcher
	fallback string
}

// Negotiate picks the catalogue for a request: the first of the caller's
// explicit choices (ui_locales, a space-separated list, or the locale
// cookie) that an offered catalogue matches, else the best match of
// Accept-Language, else the offer's default. Matching is CLDR's (x/text):
// a region falls back to its language (de-CH to de) and a language to its
// one regional catalogue (pt to pt-BR, zh and zh-Hans to zh-CN), but never
// across languages or scripts (zh-TW is not zh-CN).
func (c *Catalogues) Negotiate(offer Offer, explicit []string, acceptLanguage string) string {
	if t := c.Preferred(offer, explicit, acceptLanguage); t != "" {
		return t
	}
	return c.offerMatcher(offer).fallback
}

// Preferred is what Negotiate picks when the caller asked for a language
// the offer has, else "": a mail then falls back to the recipient's realm
// rather than to the language of whoever caused it.
func (c *Catalogues) Preferred(offer Offer, explicit []string, acceptLanguage string) string {
	for _, pref := range explicit {
		if t, ok := c.Match(offer, pref); ok {
			return t
		}
	}
	om := c.offerMatcher(offer)
	for _, tag := range acceptedLanguages(acceptLanguage) {
		if t := om.match(tag); t != "" {
			return t
		}
	}
	return ""
}

// Match is the catalogue the first tag of list (space-separated, as
// ui_locales) that the offer has matches, and whether one did.
func (c *Catalogues) Match(offer Offer, list string) (string, bool) {
	om := c.offerMatcher(offer)
	for _, tag := range strings.Fields(list) {
		if t := om.match(tag); t != "" {
			return t, true
		}
	}
	return "", false
}

func (om *offerMatcher) match(tag string) string {
	want, err := language.Parse(strings.ReplaceAll(tag, "_", "-"))
	if err != nil {
		return ""
	}
	_, i, conf := om.matcher.Match(want)
	if conf < language.High {
		return ""
	}
	// CLDR holds some languages close enough to stand in for each other
	// (Afrikaans for Dutch); a page in a language the reader did not ask
	// for is not what they asked, so the base language must be the same.
	wantBase, _ := want.Base()
	gotBase, _ := language.Make(om.tags[i]).Base()
	if wantBase != gotBase {
		return ""
	}
	return om.tags[i]
}

func (c *Catalogues) offerMatcher(offer Offer) *offerMatcher {
	key := strings.Join(offer.Supported, " ") + "|" + offer.Default
	if om, ok := c.matchers.Load(key); ok {
		return om.(*offerMatcher)
	}
	var offered []string
	for _, tag := range c.tags {
		if len(offer.Supported) == 0 || slices.ContainsFunc(offer.Supported, func(s string) bool { return strings.EqualFold(s, tag) }) {
			offered = append(offered, tag)
		}
	}
	if len(offered) == 0 {
		offered = []string{DefaultLocale}
	}
	fallback := DefaultLocale
	if i := slices.IndexFunc(offered, func(t string) bool { return strings.EqualFold(t, offer.Default) }); i >= 0 {
		fallback = offered[i]
	} else if !slices.Contains(offered, DefaultLocale) {
		fallback = offered[0]
	}
	om := &offerMatcher{fallback: fallback, tags: []string{fallback}}
	for _, t := range offered {
		if t != fallback {
			om.tags = append(om.tags, t)
		}
	}
	langs := make([]language.Tag, len(om.tags))
	for i, t := range om.tags {
		langs[i] = language.Make(t)
	}
	om.matcher = language.NewMatcher(langs)
	actual, _ := c.matchers.LoadOrStore(key, om)
	return actual.(*offerMatcher)
}

// acceptedLanguages lists the languages of an Accept-Language header by
// falling quality, dropping those refused (q=0) and malformed entries.
func acceptedLanguages(header string) []string {
	type ranked struct {
		tag string
		q   float64
	}
	var prefs []ranked
	for part := range strings.SplitSeq(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		if tag = strings.TrimSpace(tag); tag != "" && tag != "*" && q > 0 {
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
	tags := make([]string, len(prefs))
	for i, p := range prefs {
		tags[i] = p.tag
	}
	return tags
}
