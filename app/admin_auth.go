package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/adminaccounts"
	"github.com/idenplane/idenplane/app/adminkeys"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

const (
	adminTokenLifetime = 15 * time.Minute
	adminTokenAudience = "idenplane-admin"
)

// bootstrapAdmin makes the admin API key and the first admin user on first
// start, and rotates the key when IDENPLANE_ADMIN_API_KEY changes.
func (a *App) bootstrapAdmin(ctx context.Context) error {
	stored, err := a.store.AdminAPIKeyHash(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	switch {
	case a.cfg.AdminAPIKey != "":
		h := sha256.Sum256([]byte(a.cfg.AdminAPIKey))
		if subtle.ConstantTimeCompare(h[:], stored) != 1 {
			if err := a.store.SetAdminAPIKeyHash(ctx, h[:]); err != nil {
				return err
			}
			if stored != nil {
				a.log.Info("admin API key rotated from IDENPLANE_ADMIN_API_KEY")
			}
		}
		stored = h[:]
	case stored == nil:
		raw := make([]byte, 32)
		_, _ = rand.Read(raw)
		key := base64.RawURLEncoding.EncodeToString(raw)
		h := sha256.Sum256([]byte(key))
		if err := a.store.SetAdminAPIKeyHash(ctx, h[:]); err != nil {
			return err
		}
		fmt.Fprintf(a.cfg.Stdout, "Admin API key (shown once, store it now; send it as X-Admin-API-Key): %s\n", key)
		stored = h[:]
	}
	a.adminKeyHash = stored

	sys, err := ensureSystemRealm(ctx, a.store, a.now(), a.cfg.BaseURL, a.makeKey, a.account.SeedConsole)
	if err != nil {
		return err
	}
	a.systemRealmID = sys.ID
	if err := moveAdminUsers(ctx, a.store, sys, a.now()); err != nil {
		return err
	}
	if a.cfg.AdminUser == "" {
		return nil
	}
	accounts, err := a.store.ListAdminAccounts(ctx)
	if err != nil || len(accounts) > 0 {
		return err
	}
	_, err = a.adminAccounts.CreateAccount(ctx, adminaccounts.NewAccount{Username: a.cfg.AdminUser,
		Password: &a.cfg.AdminPassword, CreatedBy: "environment"})
	if err != nil {
		return fmt.Errorf("create the first administrator from IDENPLANE_ADMIN_USER: %w", err)
	}
	a.log.Info("created first administrator", "username", a.cfg.AdminUser, "realm", SystemRealmName)
	return nil
}

// principalAPIKey is the kind of an admin principal that is an admin API
// key: the bootstrap key, or a named key (its ID and name in UserID and
// Username).
const principalAPIKey = "api-key"

// principalUser is the kind of an admin principal that is an
// administrator: a user of the system realm with an admin account.
const principalUser = "user"

// adminPrincipal is who an admin request acts as.
type adminPrincipal struct {
	Kind        string // principalAPIKey, principalUser or principalServiceAccount
	UserID      string
	Username    string
	TokenID     string
	Expiry      time.Time
	Permissions authz.Set
	// Realm is the one realm an administrator confined to it acts in.
	Realm string
}

type principalKey struct{}

// routePermKey holds, while a credential is checked, the permission its
// route asks.
type routePermKey struct{}

func principalFrom(ctx context.Context) *adminPrincipal {
	p, _ := ctx.Value(principalKey{}).(*adminPrincipal)
	return p
}

// requireAdmin lets a request through only with an admin credential that
// holds perm (the bootstrap API key, a named admin API key, a service
// account's API key, or a live admin token): 401 without, 403 with a
// credential that lacks it.
func (a *App) requireAdmin(perm authz.Permission, next httpx.HandlerFunc) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := a.authenticateAdmin(r.WithContext(context.WithValue(r.Context(), routePermKey{}, perm)))
		if err != nil {
			return err
		}
		if !p.Permissions.Has(perm) {
			return apperr.Forbidden("this credential lacks the permission %s", perm)
		}
		if err := guardSystemRealm(r, SystemRealmName, p); err != nil {
			return err
		}
		return next(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}
}

func (a *App) authenticateAdmin(r *http.Request) (*adminPrincipal, error) {
	if key := r.Header.Get("X-Admin-API-Key"); key != "" {
		h := sha256.Sum256([]byte(key))
		if subtle.ConstantTimeCompare(h[:], a.adminKeyHash) == 1 {
			return &adminPrincipal{Kind: principalAPIKey, Username: adminkeys.BootstrapName, Permissions: authz.Everything()}, nil
		}
		return namedKeyPrincipal(r, key, a.adminKeys, a.cachedRealm)
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, errUnauthorized
	}
	if strings.HasPrefix(token, adminkeys.Mark) {
		return namedKeyPrincipal(r, token, a.adminKeys, a.cachedRealm)
	}
	if identity.APIKeyPrefix(token) != "" {
		return a.authenticateServiceAccount(r, token)
	}
	claims, perms, err := a.parseAdminToken(token)
	if err != nil {
		// Not an admin token: the console's, an access token of the
		// system realm.
		return a.accountAuth.consoleToken(r, token)
	}
	revoked, err := a.store.AdminTokenRevoked(r.Context(), claims.ID)
	if err != nil {
		return nil, err
	}
	if revoked {
		return nil, apperr.Unauthorized("admin token has been revoked")
	}
	return a.accountAuth.adminToken(r, claims, perms)
}

func (a *App) adminIssuer() string { return a.cfg.BaseURL + "/admin" }

// adminTokenClaims are an admin token's claims. Permissions lists what the
// token may do when its user signed in for less than everything; a token
// without it holds every permission.
type adminTokenClaims struct {
	jwt.Claims
	Username    string   `json:"preferred_username"`
	Permissions []string `json:"permissions,omitempty"`
}

func (a *App) signAdminToken(user *store.User, perms authz.Set) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: a.tokenKey},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	now := a.now()
	claims := adminTokenClaims{
		Claims: jwt.Claims{
			Issuer: a.adminIssuer(), Subject: user.ID, Audience: jwt.Audience{adminTokenAudience},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
			Expiry: jwt.NewNumericDate(now.Add(adminTokenLifetime)), ID: uuid.NewString(),
		},
		Username: user.Username,
	}
	if !perms.All() {
		claims.Permissions = authz.Names(perms)
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

func (a *App) parseAdminToken(token string) (*jwt.Claims, authz.Set, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return nil, authz.Set{}, err
	}
	var all adminTokenClaims
	if err := tok.Claims(a.tokenKey, &all); err != nil {
		return nil, authz.Set{}, err
	}
	claims := all.Claims
	err = claims.ValidateWithLeeway(jwt.Expected{
		Issuer: a.adminIssuer(), AnyAudience: jwt.Audience{adminTokenAudience}, Time: a.now(),
	}, 0)
	if err != nil {
		return nil, authz.Set{}, err
	}
	if claims.ID == "" || claims.Subject == "" || claims.Expiry == nil {
		return nil, authz.Set{}, errors.New("admin token lacks jti, sub or exp")
	}
	perms := authz.Everything()
	if all.Permissions != nil {
		if perms, err = authz.Parse(all.Permissions); err != nil {
			return nil, authz.Set{}, err
		}
	}
	return &claims, perms, nil
}

type adminUserRep struct {
	ID               string `json:"id"`
	Username         string `json:"username"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
}

// adminAPIClient names the admin login in login events, as Keycloak's
// admin-cli.
const adminAPIClient = "admin-api"

// adminLogin signs an administrator in to the admin API for a script:
// the system realm's password, and its TOTP code ("totp") when the
// account has one. An account whose second factor is a passkey signs in
// through the console only: a script uses a named API key.
func (a *App) adminLogin(w http.ResponseWriter, r *http.Request) error {
	var body adminLoginBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	perms := authz.Everything()
	if body.Permissions != nil {
		var err error
		if perms, err = authz.Parse(*body.Permissions); err != nil {
			return apperr.Field("permissions", "%v", err)
		}
		// A token that names no permission would carry none in its claims,
		// which reads as every permission.
		if len(*body.Permissions) == 0 {
			return apperr.Field("permissions", "must name at least one permission; leave it out for every one")
		}
	}
	if body.Username == nil || *body.Username == "" {
		return apperr.Field("username", "is required")
	}
	if body.Password == nil || *body.Password == "" {
		return apperr.Field("password", "is required")
	}
	ctx, ip := r.Context(), a.clientIP(r)
	sys, err := a.store.GetRealmByID(ctx, a.systemRealmID)
	if err != nil {
		return err
	}
	user, err := a.id.CheckAdminLogin(ctx, sys, *body.Username, *body.Password, ip)
	if err == nil {
		err = adminSecondFactor(ctx, a.id, sys, user, body.TOTP, ip)
	}
	if err != nil {
		return adminLoginRefusal(w, sys, user, *body.Username, ip, err, a.loginEvent, ctx)
	}
	if _, err := a.store.GetAdminAccount(ctx, user.ID); errors.Is(err, store.ErrNotFound) {
		// A user of the system realm without an account administers nothing.
		return adminLoginRefusal(w, sys, user, *body.Username, ip, identity.ErrBadCredentials, a.loginEvent, ctx)
	} else if err != nil {
		return err
	}
	a.loginEvent(ctx, sys, store.LoginEvent{Type: store.EventLogin, UserID: user.ID, ClientID: adminAPIClient, IPAddress: ip,
		Details: map[string]string{"username": user.Username}})
	token, err := a.signAdminToken(user, perms)
	if err != nil {
		return err
	}
	return httpx.OK(w, adminSession{AccessToken: token, TokenType: "Bearer", ExpiresIn: int(adminTokenLifetime.Seconds()),
		User:        adminUserRep{ID: user.ID, Username: user.Username, CreatedTimestamp: user.CreatedAt},
		Permissions: authz.Names(perms)})
}

// adminLoginBody is the body of the admin login.
type adminLoginBody struct {
	Username *string `json:"username"`
	Password *string `json:"password"`
	TOTP     string  `json:"totp"`
	// Permissions, when given, narrow the token to them: a script
	// that only reads signs in for the read permissions.
	Permissions *[]string `json:"permissions"`
}

// adminSession is the admin login's answer: the access token and what it
// holds.
type adminSession struct {
	AccessToken string       `json:"accessToken"`
	TokenType   string       `json:"tokenType"`
	ExpiresIn   int          `json:"expiresIn"`
	User        adminUserRep `json:"user"`
	Permissions []string     `json:"permissions"`
}

func (a *App) adminMe(w http.ResponseWriter, r *http.Request) error {
	p := principalFrom(r.Context())
	if p.Kind == principalAPIKey {
		me := adminMeRep{Type: principalAPIKey, Permissions: authz.Names(p.Permissions)}
		if p.UserID != "" {
			me.ID, me.Name = p.UserID, p.Username
		}
		return httpx.OK(w, me)
	}
	if p.Kind == principalServiceAccount {
		return httpx.OK(w, adminMeRep{Type: p.Kind, ID: p.UserID, Username: p.Username, Permissions: authz.Names(p.Permissions)})
	}
	user, err := a.store.GetUser(r.Context(), a.systemRealmID, p.UserID)
	if err != nil {
		return err
	}
	return httpx.OK(w, adminMeRep{Type: "user", ID: user.ID, Username: user.Username, Email: &user.Email,
		CreatedTimestamp: user.CreatedAt, TokenExpiresAt: p.Expiry.UTC().Format(time.RFC3339),
		Permissions: authz.Names(p.Permissions), Realm: p.Realm})
}

// adminMeRep is the caller of the admin API as GET /admin/auth/me shows
// it: an administrator (with its token's expiry), a named API key (with
// its creator's id and name when an administrator made it) or a service
// account.
type adminMeRep struct {
	Type     string `json:"type"`
	ID       string `json:"id,omitempty"`
	Name     string `json:"name,omitempty"`
	Username string `json:"username,omitempty"`
	// Email is an administrator's, written even when empty.
	Email            *string  `json:"email,omitempty"`
	CreatedTimestamp int64    `json:"createdTimestamp,omitempty"`
	TokenExpiresAt   string   `json:"tokenExpiresAt,omitempty"`
	Permissions      []string `json:"permissions"`
	Realm            string   `json:"realm,omitempty"`
}

func (a *App) adminLogout(w http.ResponseWriter, r *http.Request) error {
	p := principalFrom(r.Context())
	if p.Kind != principalUser {
		return apperr.Invalid("only an admin token can be logged out; the API key stays valid until rotated")
	}
	if err := a.store.RevokeAdminToken(r.Context(), p.TokenID, p.Expiry.UnixMilli()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
