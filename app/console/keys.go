package console

import (
	"net/http"

	pages "github.com/idenplane/idenplane/ui/console"
)

// Keys lists a realm's signing keys, next, active and retired.
func (s *Service) Keys(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	var keys []pages.KeyRow
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/keys"), nil, &keys); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.Keys(c.nav(r, pages.SectionKeys, "console.keys.title", realm), keys))
}

// RotateKeys publishes a next signing key, active at once when asked.
func (s *Service) RotateKeys(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	body := map[string]any{"immediate": r.PostForm.Get("immediate") == "true"}
	if err := c.call(r, http.MethodPost, adminRealm(realm, "/keys/rotate"), body, nil); err != nil {
		return err
	}
	redirect(w, r, realmPath(realm, "/keys"), "console.done.keysRotated")
	return nil
}

// TestMail sends a test mail through the realm's mail settings.
func (s *Service) TestMail(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	err := c.call(r, http.MethodPost, adminRealm(realm, "/email/test"), map[string]any{"to": r.PostForm.Get("to")}, nil)
	if err == nil {
		redirect(w, r, realmPath(realm, "/settings"), "console.done.testMailSent")
		return nil
	}
	f, ok := formFailure(err, "to")
	if !ok {
		return err
	}
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminRealm(realm, ""), nil, &rep); err != nil {
		return err
	}
	rf := pages.RealmForm{Values: stringValues(rep, realmFields), Mail: f, MailTo: r.PostForm.Get("to")}
	if err := readEvents(r, c, realm, &rf); err != nil {
		return err
	}
	return c.render(w, r, http.StatusUnprocessableEntity, pages.RealmSettings(c.nav(r, pages.SectionSettings, "console.settings.title", realm), rf))
}
