package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The rules of clients: what a stored client may be, its secret, and the
// user a client with the client_credentials grant acts as.

// Client types: a confidential client holds a secret, a public one (a
// browser or native app) cannot keep one and must use PKCE.
const (
	ClientConfidential = "CONFIDENTIAL"
	ClientPublic       = "PUBLIC"
)

// The grants a client may be allowed.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantPassword          = "password"
	GrantRefreshToken      = "refresh_token"
	GrantDeviceCode        = "urn:ietf:params:oauth:grant-type:device_code"
)

var clientGrantTypes = []string{
	GrantAuthorizationCode, GrantClientCredentials, GrantPassword, GrantRefreshToken, GrantDeviceCode,
}

// WebOriginsOfRedirects, as a web origin, stands for the origins of every
// redirect URI, as in Keycloak.
const WebOriginsOfRedirects = "+"

const (
	maxClientIDLength    = 255
	maxClientURIs        = 100
	maxClientURILength   = 2048
	clientSecretBytes    = 32
	serviceAccountPrefix = "service-account-"
)

var clientIDPattern = validate.MustPattern(`^[A-Za-z0-9._-]+$`, 2, maxClientIDLength)

// forbiddenURISchemes run code or read files where a browser lands on them.
var forbiddenURISchemes = []string{"javascript", "data", "vbscript", "file", "blob", "about"}

// DefaultGrantTypes are the grants of a client created without any named.
func DefaultGrantTypes() []string { return []string{GrantAuthorizationCode, GrantRefreshToken} }

// HasServiceAccount says whether the client acts as its own user, which it
// does exactly when it may use the client_credentials grant.
func HasServiceAccount(c *store.Client) bool {
	return slices.Contains(c.GrantTypes, GrantClientCredentials)
}

// ValidateClient checks and normalizes the fields of a client about to be
// stored. URI lists are deduplicated, keeping their order, as Keycloak keeps
// them as sets.
func ValidateClient(c *store.Client) error {
	if !clientIDPattern.MatchString(c.ClientID) {
		return apperr.Field("clientId", "must be 2 to %d letters, digits, '-', '_' or '.'", maxClientIDLength)
	}
	if err := validate.DisplayName("name", c.Name, 255); err != nil {
		return err
	}
	if err := validate.Text("description", c.Description, 1024); err != nil {
		return err
	}
	if c.ClientType != ClientConfidential && c.ClientType != ClientPublic {
		return apperr.Field("clientType", "must be %s or %s", ClientConfidential, ClientPublic)
	}
	var err error
	if c.RedirectURIs, err = checkClientList("redirectUris", c.RedirectURIs, CheckRedirectURI); err != nil {
		return err
	}
	if c.WebOrigins, err = checkClientList("webOrigins", c.WebOrigins, NormalizeWebOrigin); err != nil {
		return err
	}
	if c.GrantTypes, err = checkClientList("grantTypes", c.GrantTypes, checkGrantType); err != nil {
		return err
	}
	if c.ClientType == ClientPublic && HasServiceAccount(c) {
		return apperr.Field("grantTypes", "a PUBLIC client cannot use %s: it has no secret to authenticate with", GrantClientCredentials)
	}
	if c.BackchannelLogoutURI != "" {
		if err := validate.URIChars("backchannelLogoutUri", c.BackchannelLogoutURI); err != nil {
			return err
		}
		if !validate.IsHTTPURL(c.BackchannelLogoutURI) || strings.Contains(c.BackchannelLogoutURI, "#") {
			return apperr.Field("backchannelLogoutUri", "must be an absolute http or https URL without fragment, or empty")
		}
	}
	return nil
}

// checkClientList checks each entry of a list field, names the entry at fault by
// index, and drops repeats.
func checkClientList(field string, list []string, check func(field, s string) (string, error)) ([]string, error) {
	if len(list) > maxClientURIs {
		return nil, apperr.Field(field, "must have at most %d entries", maxClientURIs)
	}
	out := make([]string, 0, len(list))
	for i, s := range list {
		v, err := check(field+"["+strconv.Itoa(i)+"]", s)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

func checkGrantType(field, s string) (string, error) {
	if !slices.Contains(clientGrantTypes, s) {
		return "", apperr.Field(field, "must be one of %s", strings.Join(clientGrantTypes, ", "))
	}
	return s, nil
}

// checkURIText refuses what no URI of ours may hold: wildcards (redirects
// and origins match exactly), spaces, control characters, excess length.
func checkURIText(field, s string) error {
	if strings.Contains(s, "*") {
		return apperr.Field(field, "wildcards are not allowed: URIs are matched exactly, so list each one")
	}
	if len(s) > maxClientURILength {
		return apperr.Field(field, "must be at most %d bytes", maxClientURILength)
	}
	return validate.URIChars(field, s)
}

// CheckRedirectURI accepts an absolute URI without fragment (RFC 6749
// §3.1.2): http(s) with a host, or a native app's private-use scheme
// (RFC 8252 §7.1) followed by a path or an authority, such as
// com.example.app:/cb. Requiring the slash refuses mistakes like
// "localhost:8080/cb", which would parse as the scheme "localhost".
func CheckRedirectURI(field, s string) (string, error) {
	if err := checkURIText(field, s); err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Scheme == "":
		return "", apperr.Field(field, "must be an absolute URI such as https://app.example.com/callback")
	case strings.Contains(s, "#"):
		return "", apperr.Field(field, "must not contain a fragment")
	case slices.Contains(forbiddenURISchemes, u.Scheme):
		return "", apperr.Field(field, "the %s scheme is not allowed", u.Scheme)
	case u.User != nil:
		return "", apperr.Field(field, "must not contain user information")
	case u.Host != "" && !validate.URIHost(u):
		return "", apperr.Field(field, "must have a valid host: a name, an IP address, and an optional port from 1 to 65535")
	case u.Scheme == "http" || u.Scheme == "https":
		if u.Hostname() == "" {
			return "", apperr.Field(field, "must have a host")
		}
	case u.Opaque != "" || (u.Host == "" && !strings.HasPrefix(u.Path, "/")):
		return "", apperr.Field(field, "a custom-scheme URI must continue with a path or authority, as in com.example.app:/callback")
	}
	return s, nil
}

// NormalizeWebOrigin accepts "+" or an origin, scheme://host[:port], and
// lowercases it, as browsers send it in the Origin header.
func NormalizeWebOrigin(field, s string) (string, error) {
	if s == WebOriginsOfRedirects {
		return s, nil
	}
	if s == "*" {
		return "", apperr.Field(field, `"*" is not allowed: list each origin, or "+" for the origins of the redirect URIs`)
	}
	if err := checkURIText(field, s); err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	// Only http and https: CORS matches those (normalizeOrigin), so an
	// origin of another scheme would be stored and never match.
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || u.Opaque != "" ||
		u.Path != "" || strings.ContainsAny(s, "?#") || strings.HasSuffix(u.Host, ":") {
		return "", apperr.Field(field, `must be an http or https origin such as https://app.example.com:8443 (no path), or "+"`)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", apperr.Field(field, "port must be between 1 and 65535")
		}
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// NewClientSecret makes a secret of 256 random bits and its SHA-256, the
// only form stored. The secret is random, so a fast hash is enough.
func NewClientSecret() (secret string, hash []byte) {
	raw := make([]byte, clientSecretBytes)
	_, _ = rand.Read(raw) // never fails: crypto/rand aborts the program instead
	secret = base64.RawURLEncoding.EncodeToString(raw)
	h := sha256.Sum256([]byte(secret))
	return secret, h[:]
}

// CheckClientSecret says whether secret is the client's, in constant time.
// A public client has no secret and never matches.
func CheckClientSecret(c *store.Client, secret string) bool {
	if len(c.SecretHash) == 0 {
		return false
	}
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], c.SecretHash) == 1
}

// ServiceAccountUsername is the username of the client's service-account
// user.
func ServiceAccountUsername(c *store.Client) string {
	return serviceAccountPrefix + strings.ToLower(c.ClientID)
}

// SyncServiceAccount gives the client its service-account user when it has
// the client_credentials grant and deletes that user when it no longer has
// it (with the user's role mappings), on tx, the caller's transaction. The
// user is created as every user is (CreateUser); its username comes from
// the clientId, so a username refused or taken is a refusal of the
// clientId.
func (c *Core) SyncServiceAccount(ctx context.Context, tx *store.Store, realm *store.Realm, client *store.Client) error {
	u, err := tx.GetServiceAccountUser(ctx, client.ID)
	exists := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	switch want := HasServiceAccount(client); {
	case want && !exists:
		_, err := c.CreateUser(ctx, tx, realm, NewUser{Username: ServiceAccountUsername(client), ServiceAccountClientID: client.ID})
		var ae *apperr.Error
		switch {
		case errors.As(err, &ae) && ae.Status == 409 && ae.Field == "username":
			return &apperr.Error{Status: 409, Code: apperr.CodeConflict, Field: "clientId",
				Message: "the service-account username " + ServiceAccountUsername(client) + " is taken by another user", Cause: err}
		case errors.As(err, &ae) && ae.Field == "username":
			return apperr.Field("clientId", "makes the service-account username %s, which %s",
				ServiceAccountUsername(client), strings.TrimPrefix(ae.Message, "username: "))
		}
		return err
	case !want && exists:
		return tx.DeleteUser(ctx, client.RealmID, u.ID)
	}
	return nil
}
