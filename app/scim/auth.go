package scim

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// maxCredential bounds what is read of an Authorization header: a token
// is an ID (36) and a secret (43) with a dot between.
const maxCredential = 128

// caller is who a SCIM request comes from: a token and its realm.
type caller struct {
	token *store.SCIMToken
	realm *store.Realm
	model *userModel // the realm's user model, once read
}

type callerKey struct{}

// callerOf is the caller Endpoint authenticated.
func callerOf(r *http.Request) *caller { return r.Context().Value(callerKey{}).(*caller) }

// Endpoint serves h as a SCIM endpoint: the request must carry a token of
// the realm its path names (any realm's, for the discovery endpoints
// outside a realm) that is neither revoked, disabled nor expired, else
// 401; errors are SCIM errors. Every accepted request counts as a use of
// its token.
func (s *Service) Endpoint(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.authenticate(r)
		if err != nil {
			return err
		}
		if err := s.deps.Store.TouchSCIMToken(r.Context(), c.token.ID, s.deps.Now().UnixMilli()); err != nil {
			return err
		}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
		if r.Method == http.MethodGet || !hasRealm(r) {
			err = h(w, r)
		} else {
			tee := &teeWriter{ResponseWriter: w}
			if err = h(tee, r); err == nil {
				s.recordWrite(r, c, r.Method, resourcePath(r, c.realm.Name), tee.status, tee.body.Bytes())
			}
		}
		if err != nil {
			e := asSCIM(err)
			s.errors.add(c.realm.ID, RecentError{Time: s.deps.Now().UnixMilli(), Method: r.Method, Path: r.URL.Path,
				Status: e.Status, ScimType: e.Type, Detail: e.Detail})
		}
		return err
	}, s.render)
}

// unauthorized is the answer to every refused credential.
func unauthorized(detail string) *Error { return fail(http.StatusUnauthorized, "", "%s", detail) }

func (s *Service) authenticate(r *http.Request) (*caller, error) {
	auth := r.Header.Get("Authorization")
	scheme, credential, ok := strings.Cut(auth, " ")
	if auth == "" || !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, unauthorized("a SCIM token is required: Authorization: Bearer <token>")
	}
	credential = strings.TrimSpace(credential)
	id, secret, ok := strings.Cut(credential, ".")
	if !ok || len(credential) > maxCredential || id == "" || secret == "" {
		return nil, unauthorized("invalid SCIM token")
	}
	t, err := s.deps.Store.SCIMTokenByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, unauthorized("invalid SCIM token")
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(sum[:], t.SecretHash) != 1 {
		return nil, unauthorized("invalid SCIM token")
	}
	switch tokenStatus(t, s.deps.Now().UnixMilli()) {
	case tokenRevoked:
		return nil, unauthorized("the SCIM token is revoked")
	case tokenExpired:
		return nil, unauthorized("the SCIM token has expired")
	case tokenDisabled:
		return nil, unauthorized("the SCIM token is disabled")
	}
	realm, err := s.deps.Store.GetRealmByID(r.Context(), t.RealmID)
	if err != nil {
		return nil, err
	}
	if name, inRealm := mux.Vars(r)["realm"]; inRealm && name != realm.Name {
		return nil, unauthorized("the SCIM token is not one of realm " + name)
	}
	if !realm.Enabled {
		return nil, unauthorized("realm " + realm.Name + " is disabled")
	}
	return &caller{token: t, realm: realm}, nil
}

// hasRealm says whether the request's path names a realm.
func hasRealm(r *http.Request) bool {
	_, ok := mux.Vars(r)["realm"]
	return ok
}
