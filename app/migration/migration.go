// Package migration imports what other identity products export: a
// Keycloak realm (its RealmRepresentation), Auth0's users and password
// hashes, and a plain list of users with their hashes. Password hashes are
// kept as they are and checked natively (the identity core's foreign
// formats), then made argon2id at each user's next sign-in, so that
// nobody has to choose a new password for the move.
//
// A Keycloak realm is translated into the realm JSON format and written by
// the realm import (Deps.ImportRealm), with what that format does not
// carry (TOTP credentials, custom attribute values) written in the same
// transaction; users of Auth0 and of a list go into a realm that exists,
// through the identity core. Every import answers a Report: what was
// imported and what was left out and why, each with its JSON path; a
// dryRun checks and writes everything, then rolls it back. Nothing is
// written by an import that fails.
//
// See docs/migration.md.
package migration

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// RealmImport says how Deps.ImportRealm writes a realm translated from an
// export.
type RealmImport struct {
	DryRun bool
	// Then writes, in the import's transaction, what the realm format
	// does not carry.
	Then func(ctx context.Context, tx *store.Store, realm *store.Realm) error
	// Progress is told after each user written.
	Progress func(done, total int)
}

// Scope is a client scope of the realm JSON format, as DefaultScopes
// gives them.
type Scope struct {
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	Protocol        string   `json:"protocol"`
	ProtocolMappers []Mapper `json:"protocolMappers"`
}

// Mapper is a protocol mapper of the realm JSON format.
type Mapper struct {
	Name       string            `json:"name"`
	MapperType string            `json:"mapperType"`
	Protocol   string            `json:"protocol"`
	Config     map[string]string `json:"config"`
}

// Deps is what the importers use.
type Deps struct {
	Store    *store.Store
	Identity *identity.Core
	Log      *slog.Logger
	Now      func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// RealmNamed is the realm of that name, or the not-found error.
	RealmNamed func(ctx context.Context, name string) (*store.Realm, error)
	// ImportRealm writes a realm of the realm JSON format
	// (docs/realm-format.md), all of it in one transaction: the realm
	// import of app.
	ImportRealm func(ctx context.Context, data []byte, opts RealmImport) (*store.Realm, error)
	// CheckMapper checks a protocol mapper of a client scope of protocol
	// as the admin API does (app/scopes); an error names its field
	// (config.<key> for a setting the type does not take).
	CheckMapper func(protocol string, m Mapper) error
	// CheckProvider checks an identity provider of the realm JSON format
	// as the realm import does (app/broker), without fetching anything.
	CheckProvider func(provider json.RawMessage) error
	// DefaultScopes are the client scopes a new realm starts with
	// (app/scopes); ClientDefaultScopes and ClientOptionalScopes are the
	// names a new client is linked to (app/clients).
	DefaultScopes        func() []Scope
	ClientDefaultScopes  []string
	ClientOptionalScopes []string
	// Locales are the languages the pages speak; a realm's supported
	// locales are among them.
	Locales []string
	// ProgressEvery is how many users go between two progress lines in
	// the log; 0 means 1000.
	ProgressEvery int
}

// Service is the importers and their admin API.
type Service struct{ deps Deps }

// New builds the importers.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.ProgressEvery <= 0 {
		d.ProgressEvery = 1000
	}
	return &Service{deps: d}
}

func (s *Service) now() time.Time { return s.deps.Now() }

// progress logs a line every ProgressEvery users of a large import, and
// at its end.
func (s *Service) progress(ctx context.Context, what string, done, total int) {
	if total < s.deps.ProgressEvery || done%s.deps.ProgressEvery != 0 && done != total {
		return
	}
	s.deps.Log.InfoContext(ctx, "migration: import progress", "what", what, "done", done, "total", total)
}

// errDryRun rolls back the transaction of a dry run of an import into a
// realm that exists.
var errDryRun = errors.New("dry run: rolled back")

// intoRealm runs write in one transaction, rolled back for a dry run.
func (s *Service) intoRealm(ctx context.Context, dryRun bool, write func(tx *store.Store) error) error {
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := write(tx); err != nil {
			return err
		}
		if dryRun {
			return errDryRun
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		return nil
	}
	return err
}

// answer writes the report: 200 for a dry run, else 201. The admin event
// keeps its counts, not every item.
func answer(w http.ResponseWriter, r *http.Request, rep *Report) error {
	status := http.StatusCreated
	if rep.DryRun {
		status = http.StatusOK
	}
	httpx.NoteAudit(r, map[string]any{"realm": rep.Realm, "counts": rep.Counts, "skipped": len(rep.Skipped)})
	httpx.WriteJSON(w, status, rep)
	return nil
}

// readRequest reads the body's JSON object, its members by name; an
// unknown member is refused.
func readRequest(r *http.Request, known ...string) (val, error) {
	body, err := httpx.ReadBody(r)
	if err != nil {
		return val{}, err
	}
	v, err := parseJSON(body, "body")
	if err != nil {
		return val{}, apperr.InvalidJSON("%s", err.(*apperr.Error).Message)
	}
	rd := &reader{}
	root := rd.root(v, "")
	if _, ok := v.(map[string]any); !ok {
		return val{}, apperr.InvalidJSON("the body must be a JSON object")
	}
	for _, k := range root.keys() {
		if !contains(known, k) {
			return val{}, apperr.UnknownField(k)
		}
	}
	return root, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ImportKeycloak answers POST /admin/migration/keycloak: {"data": a
// Keycloak realm export, "dryRun", "realm" (another name for the realm),
// "newIds" (fresh IDs in place of Keycloak's)}.
func (s *Service) ImportKeycloak(w http.ResponseWriter, r *http.Request) error {
	root, err := readRequest(r, "data", "dryRun", "realm", "newIds")
	if err != nil {
		return err
	}
	opts := KeycloakOptions{DryRun: root.get("dryRun").boolean(false), Realm: root.get("realm").str(),
		NewIDs: root.get("newIds").boolean(false)}
	if err := root.r.err; err != nil {
		return err
	}
	if !root.has("data") {
		return apperr.Field("data", "is required: the realm export of Keycloak")
	}
	rep, err := s.keycloak(r.Context(), root.get("data"), opts)
	if err != nil {
		return err
	}
	return answer(w, r, rep)
}

// ImportAuth0 answers POST /admin/migration/auth0: {"realm", "users",
// "passwords", "dryRun"}; users and passwords are lists of objects, or
// strings of NDJSON as Auth0 exports them.
func (s *Service) ImportAuth0(w http.ResponseWriter, r *http.Request) error {
	root, err := readRequest(r, "realm", "users", "passwords", "dryRun")
	if err != nil {
		return err
	}
	dryRun := root.get("dryRun").boolean(false)
	name := root.get("realm").str()
	if err := root.r.err; err != nil {
		return err
	}
	if name == "" {
		return apperr.Field("realm", "is required: the realm the users go into")
	}
	realm, err := s.deps.RealmNamed(r.Context(), name)
	if err != nil {
		if apperr.IsNotFound(err) {
			return apperr.Field("realm", "no realm is named %s", name)
		}
		return err
	}
	rep, err := s.auth0(r.Context(), realm, root.get("users"), root.get("passwords"), dryRun)
	if err != nil {
		return err
	}
	return answer(w, r, rep)
}

// ImportUsers answers POST /admin/realms/{realm}/users/import: {"users":
// [...], "dryRun"}.
func (s *Service) ImportUsers(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	root, err := readRequest(r, "users", "dryRun")
	if err != nil {
		return err
	}
	dryRun := root.get("dryRun").boolean(false)
	if err := root.r.err; err != nil {
		return err
	}
	if !root.has("users") {
		return apperr.Field("users", "is required: a list of users")
	}
	rep, err := s.userList(r.Context(), realm, root.get("users"), dryRun)
	if err != nil {
		return err
	}
	return answer(w, r, rep)
}
