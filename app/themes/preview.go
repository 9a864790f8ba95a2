package themes

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/a-h/templ"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// PreviewInput asks for a page or a mail rendered with a draft: a
// theme's (themeId) or one sent along (theme), in a language of the
// catalogues (locale; the realm's default when left out).
type PreviewInput struct {
	Page    string      `json:"page,omitempty"`
	Email   string      `json:"email,omitempty"`
	ThemeID string      `json:"themeId,omitempty"`
	Theme   *Definition `json:"theme,omitempty"`
	Locale  string      `json:"locale,omitempty"`
}

// Preview is a page or a mail as the draft renders it: a page's HTML
// with the Content-Security-Policy it is served under (its style
// element's nonce), or a mail's subject, HTML and text.
type Preview struct {
	Page                  string `json:"page,omitempty"`
	Email                 string `json:"email,omitempty"`
	Locale                string `json:"locale"`
	Subject               string `json:"subject,omitempty"`
	HTML                  string `json:"html"`
	Text                  string `json:"text,omitempty"`
	ContentSecurityPolicy string `json:"contentSecurityPolicy,omitempty"`
}

// previewPage is a page a preview renders: the real component of the
// hosted pages with sample values.
type previewPage struct {
	name string
	page func(p *signin.Pages) templ.Component
}

var previewPageList = []previewPage{
	{"sign-in", func(p *signin.Pages) templ.Component {
		return ui.Login(p.Page("login.title"), ui.LoginForm{Action: "#", ClientName: "Sample application", ForgotURL: "#",
			RegisterURL: "#", CSRFToken: "preview"})
	}},
	{"registration", func(p *signin.Pages) templ.Component {
		return ui.Register(p.Page("register.title"), ui.RegisterForm{Action: "#", CSRFToken: "preview", EmailRequired: true,
			MinLength: 12, LoginURL: "#"})
	}},
	{"totp", func(p *signin.Pages) templ.Component {
		return ui.TOTPLogin(p.Page("totp.login.title"), ui.TOTPLoginForm{Action: "#", CSRFToken: "preview",
			ClientName: "Sample application", SwitchURL: "#"})
	}},
	{"consent", func(p *signin.Pages) templ.Component {
		return ui.Consent(p.Page("consent.title"), ui.ConsentForm{Action: "#", CSRFToken: "preview", ClientName: "Sample application",
			Scopes: []ui.ConsentScope{{Key: "consent.scope.openid"}, {Key: "consent.scope.profile"}, {Key: "consent.scope.email"}}})
	}},
	{"account", func(p *signin.Pages) templ.Component {
		return ui.Account(p.Page("account.title"), ui.AccountView{Username: "alex",
			Profile: ui.AccountProfileForm{Action: "#", CSRFToken: "preview", Email: "alex@example.com", EmailVerified: true,
				FirstName: "Alex", LastName: "Doe"},
			Password: ui.AccountPasswordForm{Action: "#", CSRFToken: "preview"}, Factors: []string{"password", "otp"},
			ExportURL: "#", TOTPURL: "#", WebAuthnURL: "#", DeleteURL: "#", LogoutURL: "#"})
	}},
	{"error", func(p *signin.Pages) templ.Component {
		return ui.AuthError(p.Page("error.title"), "error.staleAuthRequest")
	}},
}

func previewPages() []string {
	out := make([]string, len(previewPageList))
	for i, p := range previewPageList {
		out[i] = p.name
	}
	return out
}

// Preview renders a page through the hosted pages' kit and the real
// components, or a mail as the server makes it, with a draft: nothing is
// stored, nothing is sent.
func (s *Service) Preview(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var in PreviewInput
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	page := slices.IndexFunc(previewPageList, func(p previewPage) bool { return p.name == in.Page })
	_, isMail := mailtheme.KindNamed(in.Email)
	switch {
	case (in.Page == "") == (in.Email == ""):
		return apperr.Field("page", "give exactly one of page (%s) and email (%s)", strings.Join(previewPages(), ", "),
			strings.Join(mailtheme.Names(), ", "))
	case in.Page != "" && page < 0:
		return apperr.Field("page", "must be one of %s", strings.Join(previewPages(), ", "))
	case in.Email != "" && !isMail:
		return apperr.Field("email", "must be one of %s", strings.Join(mailtheme.Names(), ", "))
	}
	tag := in.Locale
	if tag == "" {
		tag = realm.DefaultLocale
		if tag == "" {
			tag = ui.DefaultLocale
		}
	}
	if !slices.Contains(s.deps.Messages.Tags(), tag) {
		return apperr.Field("locale", "no catalogue for %q; the languages are %s", tag, strings.Join(s.deps.Messages.Tags(), ", "))
	}
	d, err := s.draft(r, realm, in)
	if err != nil {
		return err
	}
	worn, err := s.wear(realm, d)
	if err != nil {
		return err
	}
	out := Preview{Page: in.Page, Email: in.Email, Locale: tag}
	if in.Email != "" {
		out.Subject, out.HTML, out.Text, err = s.deps.PreviewMail(r.Context(), realm, in.Email, tag, worn.mail)
		if err != nil {
			return err
		}
		return httpx.OK(w, out)
	}
	ctx, nonce := s.deps.Pages.ThemedContext(signin.WithRealm(r, realm), worn.page, tag)
	var b bytes.Buffer
	if err := previewPageList[page].page(s.deps.Pages).Render(ctx, &b); err != nil {
		return err
	}
	out.HTML, out.ContentSecurityPolicy = b.String(), signin.CSP(nonce)
	return httpx.OK(w, out)
}

// draft is the look a preview renders: the stored draft of themeId, or
// the one sent, checked as a theme's save checks it.
func (s *Service) draft(r *http.Request, realm *store.Realm, in PreviewInput) (Definition, error) {
	switch {
	case (in.ThemeID == "") == (in.Theme == nil):
		return Definition{}, apperr.Field("themeId", "give exactly one of themeId (a theme's draft) and theme (a draft sent along)")
	case in.Theme != nil:
		d := *in.Theme
		if err := s.check(r.Context(), realm, &d); err != nil {
			return d, apperr.Under(err, "theme")
		}
		return d, nil
	}
	t, err := s.deps.Store.GetTheme(r.Context(), realm.ID, in.ThemeID)
	if errors.Is(err, store.ErrNotFound) {
		return Definition{}, apperr.NotFound("theme " + in.ThemeID)
	} else if err != nil {
		return Definition{}, err
	}
	return decodeDefinition(t.Draft)
}
