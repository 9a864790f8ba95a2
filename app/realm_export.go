package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// realmFormatVersion is the version of the export format this binary
// writes; it reads every version up to it. See docs/realm-format.md.
const realmFormatVersion = 1

// maxImportBytes caps an import body; exports with users outgrow the usual 1 MiB.
const maxImportBytes = 256 << 20

type credentialRep struct {
	Type             string `json:"type"`
	Hash             string `json:"hash"`
	CreatedTimestamp int64  `json:"createdTimestamp,omitempty"`
}

type userExport struct {
	userRep
	Credentials []credentialRep `json:"credentials,omitempty"`
}

// realmExport is the realm JSON format: the realm's fields at the top level,
// as in the admin API, plus the format version and the realm's resources.
type realmExport struct {
	FormatVersion int `json:"formatVersion"`
	realmRep
	Users []userExport `json:"users,omitempty"`
}

// ExportRealm writes a realm as JSON. Secrets (SMTP password, provider API
// keys, password hashes) are included only when includeSecrets is set.
func ExportRealm(ctx context.Context, st *store.Store, name string, includeUsers, includeSecrets bool) ([]byte, error) {
	var out realmExport
	// One snapshot, so the realm and its users are one consistent picture.
	err := st.ReadTx(ctx, func(tx *store.Store) error {
		realm, err := tx.GetRealm(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return notFound("realm " + name)
		} else if err != nil {
			return err
		}
		out = realmExport{FormatVersion: realmFormatVersion, realmRep: toRealmRep(realm, includeSecrets)}
		if !includeUsers {
			return nil
		}
		users, err := tx.AllUsers(ctx, realm.ID)
		if err != nil {
			return err
		}
		out.Users = make([]userExport, len(users))
		for i, u := range users {
			out.Users[i] = userExport{userRep: toUserRep(u)}
			if includeSecrets && u.PasswordHash != "" {
				out.Users[i].Credentials = []credentialRep{{Type: "password", Hash: u.PasswordHash, CreatedTimestamp: u.PasswordChangedAt}}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(out, "", "  ")
}

func (a *App) exportRealm(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	includeUsers, err := boolParam(q.Get("includeUsers"), "includeUsers")
	if err != nil {
		return err
	}
	includeSecrets, err := boolParam(q.Get("includeSecrets"), "includeSecrets")
	if err != nil {
		return err
	}
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	data, err := ExportRealm(r.Context(), a.store, realm.Name, includeUsers, includeSecrets)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="realm-%s.json"`, realm.Name))
	_, _ = w.Write(append(data, '\n'))
	return nil
}

type userImport struct {
	ID               *string         `json:"id"`
	CreatedTimestamp *int64          `json:"createdTimestamp"`
	Credentials      []credentialRep `json:"credentials"`
	userCreate
}

type realmImport struct {
	FormatVersion    *int    `json:"formatVersion"`
	ID               *string `json:"id"`
	CreatedTimestamp *int64  `json:"createdTimestamp"`
	realmCreate
	Users []userImport `json:"users"`
}

// ImportRealm creates a realm, with its resources, from the realm JSON
// format. It validates everything before it writes anything, and writes it
// all in one transaction. An existing realm of that name is a conflict
// unless overwrite is set, when the import replaces it whole.
func ImportRealm(ctx context.Context, st *store.Store, data []byte, overwrite bool, now time.Time) (*store.Realm, error) {
	var in realmImport
	if err := strictUnmarshal(data, &in); err != nil {
		return nil, err
	}
	switch {
	case in.FormatVersion == nil:
		return nil, fieldError("formatVersion", "is required")
	case *in.FormatVersion < 1 || *in.FormatVersion > realmFormatVersion:
		return nil, fieldError("formatVersion", "must be between 1 and %d; this export is from a newer Idenplane", realmFormatVersion)
	case in.Name == nil:
		return nil, fieldError("name", "is required")
	}
	realm := defaultRealm()
	in.apply(&realm)
	realm.ID, realm.CreatedAt = uuid.NewString(), now.UnixMilli()
	if in.ID != nil {
		if err := uuid.Validate(*in.ID); err != nil {
			return nil, fieldError("id", "must be a UUID")
		}
		realm.ID = *in.ID
	}
	if in.CreatedTimestamp != nil {
		realm.CreatedAt = *in.CreatedTimestamp
	}
	users, err := importedUsers(&realm, in.Users, now)
	if err != nil {
		return nil, err
	}
	err = st.Tx(ctx, func(tx *store.Store) error {
		existing, err := tx.GetRealm(ctx, realm.Name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			existing = nil
		case err != nil:
			return err
		case !overwrite:
			return errorf(http.StatusConflict, "conflict", "realm %s already exists; import with overwrite to replace it", realm.Name)
		}
		restoreRedacted(&realm, existing)
		if err := validateRealm(&realm); err != nil {
			return err
		}
		if existing != nil {
			if err := keepPasswords(ctx, tx, existing, users); err != nil {
				return err
			}
			if err := tx.DeleteRealm(ctx, existing.Name); err != nil {
				return err
			}
		}
		if err := tx.CreateRealm(ctx, &realm); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return &apiError{Status: http.StatusConflict, Code: "conflict", Field: "id",
					Description: "another realm already has id " + realm.ID, Cause: err}
			}
			return err
		}
		for i, u := range users {
			if err := tx.CreateUser(ctx, u); err != nil {
				if errors.Is(err, store.ErrConflict) {
					return &apiError{Status: http.StatusConflict, Code: "conflict", Field: fmt.Sprintf("users[%d].id", i),
						Description: "a user with id " + u.ID + " exists in another realm", Cause: err}
				}
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &realm, nil
}

// restoreRedacted drops redaction placeholders from an export made without
// secrets, keeping the secrets of the realm being overwritten, if any.
func restoreRedacted(realm, existing *store.Realm) {
	var old store.Realm
	if existing != nil {
		old = *existing
	}
	if realm.SMTPPassword == redacted {
		realm.SMTPPassword = old.SMTPPassword
	}
	realm.EmailProviderConfig = keepRedacted(realm.EmailProviderConfig, old.EmailProviderConfig)
	for k, v := range realm.EmailProviderConfig {
		if v == redacted {
			delete(realm.EmailProviderConfig, k)
		}
	}
}

// keepPasswords gives users that an export carried without credentials the
// password they have in the realm being overwritten, as restoreRedacted
// does for the realm's own secrets.
func keepPasswords(ctx context.Context, tx *store.Store, existing *store.Realm, users []*store.User) error {
	for _, u := range users {
		if u.PasswordHash != "" {
			continue
		}
		old, err := tx.GetUser(ctx, existing.ID, u.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		u.PasswordHash, u.PasswordChangedAt = old.PasswordHash, old.PasswordChangedAt
	}
	return nil
}

// importedUsers validates every user of an import, naming the one at fault.
func importedUsers(realm *store.Realm, in []userImport, now time.Time) ([]*store.User, error) {
	users := make([]*store.User, 0, len(in))
	seenName, seenEmail, seenID := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, ui := range in {
		prefix := fmt.Sprintf("users[%d]", i)
		if ui.Username == nil {
			return nil, fieldError(prefix+".username", "is required")
		}
		if ui.Password != nil {
			return nil, &apiError{Status: http.StatusBadRequest, Code: "unknown_field", Field: prefix + ".password",
				Description: prefix + ".password: plaintext passwords are not imported; use credentials with a hash"}
		}
		u := &store.User{ID: uuid.NewString(), RealmID: realm.ID, Enabled: true, CreatedAt: now.UnixMilli()}
		if ui.ID != nil {
			if err := uuid.Validate(*ui.ID); err != nil {
				return nil, fieldError(prefix+".id", "must be a UUID")
			}
			u.ID = strings.ToLower(*ui.ID)
		}
		set(&u.CreatedAt, ui.CreatedTimestamp)
		set(&u.Username, ui.Username)
		set(&u.Email, ui.Email)
		set(&u.FirstName, ui.FirstName)
		set(&u.LastName, ui.LastName)
		set(&u.Enabled, ui.Enabled)
		set(&u.EmailVerified, ui.EmailVerified)
		set(&u.RequirePasswordReset, ui.RequirePasswordReset)
		if err := validateUser(u); err != nil {
			var ae *apiError
			if errors.As(err, &ae) {
				ae = &apiError{Status: ae.Status, Code: ae.Code, Field: prefix + "." + ae.Field, Description: prefix + "." + ae.Description}
				return nil, ae
			}
			return nil, err
		}
		for _, c := range ui.Credentials {
			if c.Type != "password" {
				return nil, fieldError(prefix+".credentials", "type %q is not supported", c.Type)
			}
			if _, err := parseArgon2id(c.Hash); err != nil {
				return nil, fieldError(prefix+".credentials", "hash must be an argon2id PHC string")
			}
			u.PasswordHash, u.PasswordChangedAt = c.Hash, c.CreatedTimestamp
		}
		switch {
		case seenID[u.ID]:
			return nil, errorf(http.StatusConflict, "conflict", "%s: id %s appears twice", prefix, u.ID)
		case seenName[u.Username]:
			return nil, &apiError{Status: http.StatusConflict, Code: "conflict", Field: prefix + ".username",
				Description: fmt.Sprintf("%s: username %s appears twice", prefix, u.Username)}
		case u.Email != "" && seenEmail[u.Email]:
			return nil, &apiError{Status: http.StatusConflict, Code: "conflict", Field: prefix + ".email",
				Description: fmt.Sprintf("%s: email %s appears twice", prefix, u.Email)}
		}
		seenID[u.ID], seenName[u.Username], seenEmail[u.Email] = true, true, true
		users = append(users, u)
	}
	return users, nil
}

func (a *App) importRealm(w http.ResponseWriter, r *http.Request) error {
	overwrite, err := boolParam(r.URL.Query().Get("overwrite"), "overwrite")
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	realm, err := ImportRealm(r.Context(), a.store, body, overwrite, a.now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toRealmRep(realm, false))
	return nil
}
