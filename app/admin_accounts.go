package app

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/adminaccounts"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// accountAuth admits administrators' tokens to the admin API: the admin
// tokens of the password login, and the console's access tokens of the
// system realm. What either may do is the admin account's permissions (an
// admin token may carry fewer); a token of a user without an account, of
// a disabled user, or issued before the user's access ended, admits
// nothing.
type accountAuth struct {
	store       *store.Store
	systemRealm func(context.Context) (*store.Realm, error)
	realmNamed  func(context.Context, string) (*store.Realm, error)
	// verifyAccessToken checks an access token of a realm, its standing
	// included, and answers its claims.
	verifyAccessToken func(context.Context, *store.Realm, string) (map[string]any, error)
}

// errAdminToken: a Bearer token that is neither a live admin token nor a
// live console token.
var errAdminToken = apperr.Unauthorized("invalid or expired admin token")

// admin answers the principal of the system realm's user userID, holding
// at most limit, from a token issued at iat (Unix seconds).
func (aa *accountAuth) admin(r *http.Request, userID string, iat int64, limit authz.Set, tokenID string) (*adminPrincipal, error) {
	ctx := r.Context()
	sys, err := aa.systemRealm(ctx)
	if err != nil {
		return nil, err
	}
	// The standing of a token without a session: its user enabled and not
	// ended since iat, the console client enabled.
	until, err := aa.store.AccessTokenLiveUntil(ctx, &store.AccessTokenClaims{RealmID: sys.ID, TokenID: tokenID, UserID: userID,
		ClientID: ConsoleClientID, IssuedAt: iat})
	if err != nil {
		return nil, err
	}
	if until == 0 {
		return nil, errAdminToken
	}
	acct, err := aa.store.GetAdminAccount(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.Unauthorized("the administrator no longer has an admin account")
	} else if err != nil {
		return nil, err
	}
	user, err := aa.store.GetUser(ctx, sys.ID, userID)
	if err != nil {
		return nil, err
	}
	held, err := authz.ParseStored(acct.Permissions)
	if err != nil {
		return nil, err
	}
	p := &adminPrincipal{Kind: principalUser, UserID: user.ID, Username: user.Username, TokenID: tokenID,
		Permissions: held.Intersect(limit)}
	if acct.RealmID != "" {
		// Asking who one is (or signing out) is no act in a realm: a
		// confined administrator learns there which realm is theirs.
		if perm, _ := ctx.Value(routePermKey{}).(authz.Permission); perm == authz.Authenticated && mux.Vars(r)["realm"] == "" {
			realm, err := aa.store.GetRealmByID(ctx, acct.RealmID)
			if err != nil {
				return nil, err
			}
			p.Realm = realm.Name
			return p, nil
		}
		realm, err := confiningRealm(r, aa.realmNamed)
		if err != nil {
			return nil, err
		}
		if realm.ID != acct.RealmID {
			return nil, apperr.Unauthorized("administrator %s acts only in their own realm", user.Username)
		}
		p.Realm = realm.Name
	}
	return p, nil
}

// adminToken admits an admin token of the password login.
func (aa *accountAuth) adminToken(r *http.Request, claims *jwt.Claims, limit authz.Set) (*adminPrincipal, error) {
	p, err := aa.admin(r, claims.Subject, claims.IssuedAt.Time().Unix(), limit, claims.ID)
	if err != nil {
		return nil, err
	}
	p.Expiry = claims.Expiry.Time()
	return p, nil
}

// consoleToken admits an access token of the system realm that the
// console obtained: the realm's own check (signature, expiry, session,
// user) and then the account's.
func (aa *accountAuth) consoleToken(r *http.Request, token string) (*adminPrincipal, error) {
	ctx := r.Context()
	sys, err := aa.systemRealm(ctx)
	if err != nil {
		return nil, err
	}
	claims, err := aa.verifyAccessToken(ctx, sys, token)
	if err != nil {
		return nil, &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeUnauthorized, Message: errAdminToken.Message, Cause: err}
	}
	if azp, _ := claims["azp"].(string); azp != ConsoleClientID {
		return nil, apperr.Unauthorized("only the admin console's tokens of the system realm admit to the admin API")
	}
	sub, _ := claims["sub"].(string)
	iat, _ := claims["iat"].(float64)
	p, err := aa.admin(r, sub, int64(iat), authz.Everything(), "")
	if err != nil {
		return nil, err
	}
	if exp, ok := claims["exp"].(float64); ok {
		p.Expiry = time.Unix(int64(exp), 0)
	}
	return p, nil
}

// adminSecondFactor is what an administrator's password login owes
// after the password: the TOTP code of an account that has one. An
// account whose second factor is a passkey, or that must still enrol
// one, signs in through the console.
func adminSecondFactor(ctx context.Context, id *identity.Core, sys *store.Realm, user *store.User, code, ip string) error {
	step, err := id.NeedsSecondFactor(ctx, sys, user.ID)
	if err != nil {
		return err
	}
	switch step {
	case "":
		return nil
	case store.StepTOTP:
		if code == "" {
			return errAdminTOTPRequired
		}
		return id.CheckOneTimeCode(ctx, sys, user, code, false, ip)
	case store.StepTOTPSetup:
		return apperr.Forbidden("this administrator has no second factor yet: sign in to the console at %s first to enrol one", ConsolePath)
	}
	return apperr.Forbidden("this administrator signs in with a passkey: use the console, or a named admin API key for scripts")
}

// errAdminTOTPRequired: the password was right, the TOTP code missing.
var errAdminTOTPRequired = apperr.Field("totp", "is required: this administrator has an authenticator app")

// adminLoginRefusal is the answer to a refused admin login, with its login
// event in the system realm.
func adminLoginRefusal(w http.ResponseWriter, sys *store.Realm, user *store.User, login, ip string, err error,
	event func(context.Context, *store.Realm, store.LoginEvent), ctx context.Context) error {
	var throttled *identity.ThrottledError
	if errors.As(err, &throttled) {
		httpx.RetryAfter(w, throttled.Wait)
		return apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many failed logins; try again later")
	}
	reason := signin.LoginErrorReason(err)
	switch {
	case errors.Is(err, identity.ErrInvalidTOTP):
		reason = "invalid_user_credentials"
	case reason == "" && !errors.Is(err, errAdminTOTPRequired):
		var ae *apperr.Error
		if !errors.As(err, &ae) {
			return err // a failure of ours, not a refusal
		}
		reason = "second_factor_required"
	}
	e := store.LoginEvent{Type: store.EventLoginError, ClientID: adminAPIClient, IPAddress: ip, Error: reason,
		Details: map[string]string{"username": login}}
	if user != nil {
		e.UserID = user.ID
	} else if id, locked := identity.LockedOut(err); locked {
		e.UserID = id
	}
	if reason != "" {
		event(ctx, sys, e)
	}
	switch {
	case errors.Is(err, identity.ErrBadCredentials), errors.Is(err, identity.ErrUserDisabled), errors.Is(err, identity.ErrInvalidTOTP):
		// One answer for all: which was wrong, or that the account is
		// locked or disabled, is not told to whoever guesses.
		return apperr.New(http.StatusUnauthorized, apperr.CodeInvalidCredentials, "invalid username, password or code")
	}
	return err
}

// CreateAdminAccount makes an administrator from the command line: an
// enrolment link when no password is given.
func CreateAdminAccount(ctx context.Context, a *App, na adminaccounts.NewAccount) (*adminaccounts.AdminAccountRep, error) {
	return a.adminAccounts.CreateAccount(ctx, na)
}
