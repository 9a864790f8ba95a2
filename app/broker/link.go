package broker

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Confirming a link: an upstream account whose email a local account has,
// from a provider not trusted with emails (or an email the upstream has
// not verified), is linked only after the person signs in to the local
// account once on this page: its password, and its authenticator app's
// code when it has one. An account whose second factor is a security key
// gives its password here and its key at the sign-in that follows.

const (
	pathLink     = "/broker/{alias}/link"
	linkLifetime = 10 * time.Minute
	linkForm     = "broker-link" // names the form in its CSRF token
)

var errNoLink = pageError(http.StatusBadRequest, apperr.CodeInvalidRequest, "broker.error.noLink")

func (s *Service) linkURL(realm *store.Realm, alias, id string) string {
	return s.issuer(realm) + "/broker/" + url.PathEscape(alias) + "/link?" + url.Values{"id": {id}}.Encode()
}

// askToConfirmLink holds the upstream identity for this browser and sends
// it to the confirmation page.
func (s *Service) askToConfirmLink(w http.ResponseWriter, r *http.Request, realm *store.Realm, p *store.IdentityProvider, l *store.BrokerLogin, user *store.User, ident *upstreamIdentity) error {
	identJSON, err := json.Marshal(ident)
	if err != nil {
		return err
	}
	now := s.deps.Now()
	pl := &store.BrokerPendingLink{ID: randomToken(), RealmID: realm.ID, ProviderID: p.ID, UserID: user.ID,
		AuthRequestID: l.AuthRequestID, SignInFlowID: l.SignInFlowID, BrowserHash: l.BrowserHash, Identity: string(identJSON),
		CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(linkLifetime).UnixMilli()}
	if err := s.deps.Store.CreateBrokerPendingLink(r.Context(), pl); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errStaleRequest
		}
		return err
	}
	http.Redirect(w, r, s.linkURL(realm, p.Alias, pl.ID), http.StatusSeeOther)
	return nil
}

// pendingLink is a link waiting for its confirmation in this browser.
type pendingLink struct {
	provider *store.IdentityProvider
	link     *store.BrokerPendingLink
	user     *store.User
	ident    upstreamIdentity
}

func (s *Service) loadPendingLink(w http.ResponseWriter, r *http.Request, realm *store.Realm, id string) (*pendingLink, error) {
	ctx := r.Context()
	p, err := s.enabledProvider(ctx, realm, mux.Vars(r)["alias"])
	if err != nil {
		return nil, err
	}
	if id == "" || len(id) > 128 {
		return nil, errNoLink
	}
	pl, err := s.deps.Store.GetBrokerPendingLink(ctx, realm.ID, id, s.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) || err == nil && pl.ProviderID != p.ID {
		return nil, errNoLink
	} else if err != nil {
		return nil, err
	}
	browser := store.HashToken(s.deps.Pages.BrowserSecret(w, r, realm))
	if subtle.ConstantTimeCompare(browser, pl.BrowserHash) != 1 {
		return nil, errOtherBrowser
	}
	user, err := s.deps.Store.GetUser(ctx, realm.ID, pl.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoLink
	} else if err != nil {
		return nil, err
	}
	if !user.Enabled {
		return nil, errUserDisabled
	}
	out := &pendingLink{provider: p, link: pl, user: user}
	if err := json.Unmarshal([]byte(pl.Identity), &out.ident); err != nil {
		return nil, err
	}
	return out, nil
}

// LinkPage shows the confirmation form.
func (s *Service) LinkPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	pl, err := s.loadPendingLink(w, r, realm, r.URL.Query().Get("id"))
	if err != nil {
		return err
	}
	return s.renderLink(w, r, realm, pl, http.StatusOK, "")
}

func (s *Service) renderLink(w http.ResponseWriter, r *http.Request, realm *store.Realm, pl *pendingLink, status int, errKey string) error {
	step, err := s.deps.Core.NeedsSecondFactor(r.Context(), realm, pl.user.ID)
	if err != nil {
		return err
	}
	token := s.deps.Pages.CSRFToken(w, r, realm, linkForm, pl.link.ID)
	name := pl.provider.DisplayName
	if name == "" {
		name = pl.provider.Alias
	}
	f := ui.BrokerLinkForm{Action: s.issuer(realm) + "/broker/" + url.PathEscape(pl.provider.Alias) + "/link",
		LinkID: pl.link.ID, CSRFToken: token, Provider: name, Username: pl.user.Username,
		NeedsCode: step == store.StepTOTP, Error: errKey}
	// Brokering's pages are steps of a sign-in: their forms end at the
	// application.
	signin.FormsLeaveServer(r.Context())
	return s.deps.Pages.Render(w, r, status, ui.BrokerLink(s.deps.Pages.Page("broker.link.title"), f))
}

// LinkConfirm takes the confirmation form: the account's password (and
// code), checked by the identity core under its brute-force rules; then
// the link, and the sign-in.
func (s *Service) LinkConfirm(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return errNoLink
	}
	ctx := r.Context()
	pl, err := s.loadPendingLink(w, r, realm, r.PostForm.Get("id"))
	if err != nil {
		return err
	}
	if err := s.deps.Pages.CheckCSRF(r, linkForm, pl.link.ID); err != nil {
		return err
	}
	ip := s.deps.ClientIP(r)
	err = s.deps.Core.CheckUserPassword(ctx, realm, pl.user, r.PostForm.Get("password"), ip)
	if refused := s.refusal(w, r, realm, pl, err, "login.error.invalid"); refused != nil || err != nil {
		return refused
	}
	step, err := s.deps.Core.NeedsSecondFactor(ctx, realm, pl.user.ID)
	if err != nil {
		return err
	}
	amr := []string{AMRFederated, "pwd"}
	if step == store.StepTOTP {
		err = s.deps.Core.CheckOneTimeCode(ctx, realm, pl.user, r.PostForm.Get("code"), false, ip)
		if refused := s.refusal(w, r, realm, pl, err, "broker.link.error.code"); refused != nil || err != nil {
			return refused
		}
		amr = append(amr, "otp")
	}
	st, err := readSettings(pl.provider)
	if err != nil {
		return err
	}
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.DeleteBrokerPendingLink(ctx, realm.ID, pl.link.ID); err != nil {
			return err
		}
		return s.link(ctx, tx, realm, pl.provider, st, pl.user, &pl.ident)
	})
	if errors.Is(err, store.ErrNotFound) {
		return errNoLink // confirmed already, by a second post
	} else if err != nil {
		return err
	}
	e := store.LoginEvent{Type: store.EventIdentityProviderLinkAccount, UserID: pl.user.ID, IPAddress: ip,
		Details: map[string]string{"identity_provider": pl.provider.Alias, "identity_provider_identity": pl.ident.Username}}
	return s.deps.SignIn(w, r, realm, Finish{AuthRequestID: pl.link.AuthRequestID, FlowID: pl.link.SignInFlowID, User: pl.user, ProviderID: pl.provider.ID,
		SecondFactorDone: step == store.StepTOTP, AMR: amr, Events: []store.LoginEvent{e}})
}

// refusal shows the form again for a wrong password or code (key), or a
// throttled one; it is nil when err is nil, and err itself when it is
// not a refusal.
func (s *Service) refusal(w http.ResponseWriter, r *http.Request, realm *store.Realm, pl *pendingLink, err error, key string) error {
	var throttled *identity.ThrottledError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, identity.ErrBadCredentials), errors.Is(err, identity.ErrInvalidTOTP):
		return s.renderLink(w, r, realm, pl, http.StatusUnauthorized, key)
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		return s.renderLink(w, r, realm, pl, http.StatusTooManyRequests, "login.error.throttled")
	}
	return err
}
