package console

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// realmPath is the console's address of a realm's page.
func realmPath(realm, rest string) string { return Prefix + "/realms/" + url.PathEscape(realm) + rest }

// adminRealm is the admin API's address of a realm's resource.
func adminRealm(realm, rest string) string { return "/admin/realms/" + url.PathEscape(realm) + rest }

// Realms lists the realms the administrator may work in.
func (s *Service) Realms(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	var list []pages.RealmRow
	if c.me.Realm != "" {
		list = append(list, pages.RealmRow{Name: c.me.Realm, Enabled: true})
	} else if err := c.call(r, http.MethodGet, "/admin/realms", nil, &list); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.Realms(c.nav(r, pages.SectionRealms, "console.realms.title"), list))
}

// realmFields are the realm settings the console's forms show, by the
// API's names.
var realmFields = slices.Concat([]string{"name"}, realmTexts, realmNumbers, realmChecks)

// eventsFields are the events' settings the console's form shows, by
// the API's names (events/config).
var eventsFields = []string{"eventsEnabled", "eventsExpiration", "adminEventsEnabled"}

// readEvents adds the realm's events settings to its settings page, when
// the administrator may read them.
func readEvents(r *http.Request, c *Ctx, realm string, f *pages.RealmForm) error {
	if !c.can(authz.EventsRead) {
		return nil
	}
	var cfg map[string]any
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/events/config"), nil, &cfg); err != nil {
		return err
	}
	if f.Events == nil {
		f.Events = stringValues(cfg, eventsFields)
	}
	return nil
}

// SaveEventsConfig changes which events the realm keeps and how long:
// the events' settings are a whole (PUT), so the event types kept stay
// as they are.
func (s *Service) SaveEventsConfig(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	var before map[string]any
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/events/config"), nil, &before); err != nil {
		return err
	}
	body, f := readForm(r, nil, []string{"eventsExpiration"}, []string{"eventsEnabled", "adminEventsEnabled"})
	body["enabledEventTypes"] = before["enabledEventTypes"]
	if len(f.Errors) == 0 {
		var after map[string]any
		err := c.call(r, http.MethodPut, adminRealm(realm, "/events/config"), body, &after)
		if err == nil {
			redirect(w, r, realmPath(realm, "/settings"), changed(before, after, eventsFields)...)
			return nil
		}
		var ok bool
		if f, ok = formFailure(err, eventsFields...); !ok {
			return err
		}
	}
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminRealm(realm, ""), nil, &rep); err != nil {
		return err
	}
	rf := pages.RealmForm{Values: stringValues(rep, realmFields), Events: formValues(r), EventsForm: f}
	return c.render(w, r, http.StatusUnprocessableEntity, pages.RealmSettings(c.nav(r, pages.SectionSettings, "console.settings.title", realm), rf))
}

// NewRealm shows the form of a new realm.
func (s *Service) NewRealm(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return c.render(w, r, http.StatusOK, pages.NewRealm(c.nav(r, pages.SectionRealms, "console.realms.new"),
		pages.RealmForm{Values: map[string]string{"enabled": "true"}}))
}

// CreateRealm creates a realm with POST /admin/realms.
func (s *Service) CreateRealm(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	body := map[string]any{"name": r.PostForm.Get("name"), "displayName": r.PostForm.Get("displayName"),
		"enabled": r.PostForm.Get("enabled") == "true"}
	var created struct {
		Name string `json:"name"`
	}
	if err := c.call(r, http.MethodPost, "/admin/realms", body, &created); err != nil {
		f, ok := formFailure(err, "name", "displayName", "enabled")
		if !ok {
			return err
		}
		return c.render(w, r, http.StatusUnprocessableEntity, pages.NewRealm(c.nav(r, pages.SectionRealms, "console.realms.new"),
			pages.RealmForm{Form: f, Values: formValues(r)}))
	}
	redirect(w, r, realmPath(created.Name, "/settings"), "console.done.realmCreated")
	return nil
}

// RealmSettings shows a realm's settings.
func (s *Service) RealmSettings(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminRealm(realm, ""), nil, &rep); err != nil {
		return err
	}
	f := pages.RealmForm{Values: stringValues(rep, realmFields)}
	if err := readEvents(r, c, realm, &f); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.RealmSettings(c.nav(r, pages.SectionSettings, "console.settings.title", realm), f))
}

// realmNumbers and realmChecks are the settings whose inputs are numbers
// and checkboxes.
var (
	// The events' settings are the events module's (events/config), and
	// the page shows them read-only.
	realmNumbers = []string{"accessTokenLifespan", "refreshTokenLifespan", "offlineTokenLifespan", "passwordMinLength",
		"passwordHistoryCount", "passwordMaxAgeDays", "maxLoginFailures", "lockoutDuration", "failureResetTime",
		"permanentLockoutAfter", "smtpPort"}
	realmChecks = []string{"enabled", "registrationAllowed", "requireEmailVerification", "mfaRequired",
		"passwordRequireUppercase", "passwordRequireLowercase", "passwordRequireDigits", "passwordRequireSpecialChars",
		"bruteForceEnabled", "smtpSecure"}
	realmTexts = []string{"displayName", "smtpHost", "smtpUser", "smtpFrom", "termsVersion", "termsText"}
)

// SaveRealmSettings changes a realm's settings with PATCH, and says which
// changed.
func (s *Service) SaveRealmSettings(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	var before map[string]any
	if err := c.call(r, http.MethodGet, adminRealm(realm, ""), nil, &before); err != nil {
		return err
	}
	body, f := readForm(r, realmTexts, realmNumbers, realmChecks)
	nav := c.nav(r, pages.SectionSettings, "console.settings.title", realm)
	if len(f.Errors) == 0 {
		var after map[string]any
		err := c.call(r, http.MethodPatch, adminRealm(realm, ""), body, &after)
		if err == nil {
			redirect(w, r, realmPath(realm, "/settings"), changed(before, after, realmFields)...)
			return nil
		}
		var ok bool
		if f, ok = formFailure(err, realmFields...); !ok {
			return err
		}
	}
	rf := pages.RealmForm{Form: f, Values: formValues(r)}
	if err := readEvents(r, c, realm, &rf); err != nil {
		return err
	}
	return c.render(w, r, http.StatusUnprocessableEntity, pages.RealmSettings(nav, rf))
}

// readForm reads a form's texts, numbers and checkboxes into an API body.
// A number that is none is the form's refusal, at its field, with the
// others.
func readForm(r *http.Request, texts, numbers, checks []string) (map[string]any, pages.Form) {
	body := map[string]any{}
	f := pages.Form{Errors: map[string]string{}}
	for _, k := range texts {
		body[k] = strings.TrimSpace(r.PostForm.Get(k))
	}
	for _, k := range numbers {
		v := strings.TrimSpace(r.PostForm.Get(k))
		n, err := strconv.Atoi(v)
		if err != nil {
			f.Errors[k] = "console.error.number"
			continue
		}
		body[k] = n
	}
	for _, k := range checks {
		body[k] = r.PostForm.Get(k) == "true"
	}
	return body, f
}

// formValues are a posted form's values, to show it again.
func formValues(r *http.Request) map[string]string {
	out := map[string]string{}
	for k, v := range r.PostForm {
		if k != csrfField && len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

// stringValues shows an API representation's fields as a form's values.
func stringValues(rep map[string]any, fields []string) map[string]string {
	out := map[string]string{}
	for _, k := range fields {
		switch v := rep[k].(type) {
		case nil:
		case string:
			out[k] = v
		case bool:
			out[k] = strconv.FormatBool(v)
		case float64:
			out[k] = strconv.FormatFloat(v, 'f', -1, 64)
		case []any:
			lines := make([]string, 0, len(v))
			for _, e := range v {
				if s, ok := e.(string); ok {
					lines = append(lines, s)
				}
			}
			out[k] = strings.Join(lines, "\n")
		}
	}
	return out
}

// changed names the fields whose value differs between two
// representations, for the message that says what a change did.
func changed(before, after map[string]any, fields []string) []string {
	b, a := stringValues(before, fields), stringValues(after, fields)
	var out []string
	for _, k := range fields {
		if b[k] != a[k] {
			out = append(out, "changed:"+k)
		}
	}
	if len(out) == 0 {
		out = append(out, "console.done.nothingChanged")
	}
	return out
}
