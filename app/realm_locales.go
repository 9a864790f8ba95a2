package app

import (
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// checkRealmLocales refuses languages there is no catalogue for (a typo
// would silently leave the pages in English) and a default the realm does
// not offer.
func checkRealmLocales(r *store.Realm) error {
	tags := ui.CatalogueTags()
	for _, l := range r.SupportedLocales {
		if !slices.Contains(tags, l) {
			return apperr.Field("supportedLocales", "%q is not one of the pages' languages: %s", l, strings.Join(tags, ", "))
		}
	}
	if r.DefaultLocale == "" {
		return nil
	}
	if !slices.Contains(tags, r.DefaultLocale) {
		return apperr.Field("defaultLocale", "%q is not one of the pages' languages: %s", r.DefaultLocale, strings.Join(tags, ", "))
	}
	if len(r.SupportedLocales) > 0 && !slices.Contains(r.SupportedLocales, r.DefaultLocale) {
		return apperr.Field("defaultLocale", "must be one of supportedLocales")
	}
	return nil
}

// realmLanguages are the languages a realm's pages speak: those it offers,
// else every catalogue's.
func realmLanguages(realm *store.Realm, c *ui.Catalogues) []string {
	if len(realm.SupportedLocales) > 0 {
		return realm.SupportedLocales
	}
	return c.Tags()
}
