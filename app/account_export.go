package app

import (
	"context"
	"math"
	"net/http"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/app/groups"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/sessions"
	"github.com/idenplane/idenplane/store"
)

// The data export: everything the server keeps about the user, as one
// JSON document, for a Bearer caller and a browser alike. Secrets stay
// out of it: no password hash, no token or its hash, no mail body (mail
// carries single-use links). It is served here, beside app/account: the
// document holds the representations of app/sessions, app/events and
// app/groups, and a module imports no other.

// accountExportFormat versions the document's shape.
const accountExportFormat = "idenplane-account-export/1"

type accountExportRep struct {
	Format      string                      `json:"format"`
	ExportedAt  int64                       `json:"exportedAt"` // Unix milliseconds, as are the other times
	Realm       string                      `json:"realm"`
	Profile     account.AccountRep          `json:"profile"`
	Status      string                      `json:"status"` // active, pending or rejected (registration moderation)
	Enabled     bool                        `json:"enabled"`
	Credentials []account.AccountCredential `json:"credentials"`
	Groups      []accountExportGroup        `json:"groups"`
	RoleMapping accountExportRoles          `json:"roleMappings"`
	Sessions    []sessions.SessionRep       `json:"sessions"`
	Consents    []sessions.ConsentRep       `json:"consents"`
	ConsentLog  []sessions.ConsentEventRep  `json:"consentHistory"`
	Events      []events.LoginEventRep      `json:"events"`
	Links       []accountExportLink         `json:"emailLinks"`
	Emails      []accountExportEmail        `json:"emails"`
	Terms       []accountExportTerms        `json:"termsAccepted"`
	Deletion    account.AccountDeletionRep  `json:"deletion"`
	Actions     accountExportActions        `json:"requiredActions"`
	Omitted     []string                    `json:"omitted"`
}

type accountExportGroup struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Path string `json:"path"`
}

// accountExportRoles are the roles mapped to the user directly; those
// that come through groups follow from the groups.
type accountExportRoles struct {
	Realm  []string            `json:"realm"`
	Client map[string][]string `json:"client"` // by clientId
}

// accountExportLink is a link mailed to the user (verify-email,
// reset-password), without its token.
type accountExportLink struct {
	Kind      string `json:"kind"`
	Email     string `json:"email"`
	CreatedAt int64  `json:"createdAt"`
	ExpiresAt int64  `json:"expiresAt"`
	UsedAt    int64  `json:"usedAt,omitempty"`
}

// accountExportEmail is a mail sent (or to be sent) to the user's address.
type accountExportEmail struct {
	Subject   string `json:"subject"`
	CreatedAt int64  `json:"createdAt"`
	SentAt    int64  `json:"sentAt,omitempty"`
	FailedAt  int64  `json:"failedAt,omitempty"`
}

// accountExportTerms is a version of the realm's terms the user accepted.
type accountExportTerms struct {
	Version    string `json:"version"`
	AcceptedAt int64  `json:"acceptedAt"`
}

type accountExportActions struct {
	UpdatePassword bool `json:"updatePassword"`
	VerifyEmail    bool `json:"verifyEmail"`
}

// accountExportOmitted says what the document leaves out on purpose, so a
// reader does not take it for missing.
var accountExportOmitted = []string{
	"password and other credential secrets and their hashes",
	"tokens, codes and their hashes",
	"bodies of mail, which carry single-use links",
	"the realm's admin audit log, which records administrators' actions",
}

// accountExport answers GET /account/data-export with the document, as a
// download.
func (a *App) accountExport(w http.ResponseWriter, r *http.Request, c *account.Caller) error {
	doc, err := a.accountExportDoc(r.Context(), c)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", `attachment; filename="account-data.json"`)
	httpx.WriteJSON(w, http.StatusOK, doc)
	return nil
}

func (a *App) accountExportDoc(ctx context.Context, c *account.Caller) (*accountExportRep, error) {
	u := c.User
	rep, err := a.account.Rep(ctx, c)
	if err != nil {
		return nil, err
	}
	creds, err := a.account.Credentials(ctx, c.Realm, u)
	if err != nil {
		return nil, err
	}
	doc := &accountExportRep{Format: accountExportFormat, ExportedAt: a.now().UnixMilli(), Realm: c.Realm.Name,
		Profile: *rep, Enabled: u.Enabled, Credentials: creds, Deletion: rep.Deletion,
		Actions: accountExportActions{UpdatePassword: u.RequirePasswordReset,
			VerifyEmail: c.Realm.RequireEmailVerification && u.Email != "" && !u.EmailVerified},
		Omitted: accountExportOmitted}
	err = a.store.ReadTx(ctx, func(tx *store.Store) error {
		var err error
		if doc.Status, err = tx.UserStatus(ctx, c.Realm.ID, u.ID); err != nil {
			return err
		}
		if doc.Groups, err = accountExportGroups(ctx, tx, c.Realm, u); err != nil {
			return err
		}
		if doc.RoleMapping, err = accountExportRoleMappings(ctx, tx, u); err != nil {
			return err
		}
		live, err := tx.ListUserSessions(ctx, c.Realm.ID, u.ID, a.now().UnixMilli())
		if err != nil {
			return err
		}
		doc.Sessions = httpx.Reps(live, sessions.ToSessionRep)
		consents, err := tx.ListUserConsents(ctx, c.Realm.ID, u.ID)
		if err != nil {
			return err
		}
		doc.Consents = httpx.Reps(consents, sessions.ToConsentRep)
		history, err := tx.ConsentHistory(ctx, c.Realm.ID, u.ID, 0, math.MaxInt32)
		if err != nil {
			return err
		}
		doc.ConsentLog = httpx.Reps(history, sessions.ToConsentEventRep)
		doc.Events = []events.LoginEventRep{}
		err = tx.EachLoginEvent(ctx, c.Realm.ID, store.LoginEventFilter{UserID: u.ID}, func(e *store.LoginEvent) error {
			doc.Events = append(doc.Events, events.ToLoginEventRep(e))
			return nil
		})
		if err != nil {
			return err
		}
		links, err := tx.UserActionTokens(ctx, c.Realm.ID, u.ID)
		if err != nil {
			return err
		}
		doc.Links = make([]accountExportLink, len(links))
		for i, l := range links {
			doc.Links[i] = accountExportLink{Kind: l.Kind, Email: l.Email, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt, UsedAt: l.UsedAt}
		}
		mails, err := tx.EmailsTo(ctx, c.Realm.ID, u.Email)
		if err != nil {
			return err
		}
		doc.Emails = make([]accountExportEmail, len(mails))
		for i, m := range mails {
			doc.Emails[i] = accountExportEmail{Subject: m.Subject, CreatedAt: m.CreatedAt, SentAt: m.SentAt, FailedAt: m.FailedAt}
		}
		terms, err := tx.UserTermsAcceptances(ctx, c.Realm.ID, u.ID)
		if err != nil {
			return err
		}
		doc.Terms = make([]accountExportTerms, len(terms))
		for i, t := range terms {
			doc.Terms[i] = accountExportTerms{Version: t.Version, AcceptedAt: t.AcceptedAt}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

func accountExportGroups(ctx context.Context, tx *store.Store, realm *store.Realm, u *store.User) ([]accountExportGroup, error) {
	direct, err := tx.ListUserGroups(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(direct))
	for i, g := range direct {
		ids[i] = g.ID
	}
	ancestry, err := tx.GroupAncestry(ctx, realm.ID, ids...)
	if err != nil {
		return nil, err
	}
	paths := groups.Paths(ancestry)
	out := make([]accountExportGroup, len(direct))
	for i, g := range direct {
		out[i] = accountExportGroup{ID: g.ID, Name: g.Name, Path: paths[g.ID]}
	}
	return out, nil
}

func accountExportRoleMappings(ctx context.Context, tx *store.Store, u *store.User) (accountExportRoles, error) {
	out := accountExportRoles{Realm: []string{}, Client: map[string][]string{}}
	roles, err := tx.ListRoleMappings(ctx, store.UserRoles(u.ID), "*")
	if err != nil {
		return out, err
	}
	for _, role := range roles {
		if role.ClientID == "" {
			out.Realm = append(out.Realm, role.Name)
		} else {
			out.Client[role.ClientClientID] = append(out.Client[role.ClientClientID], role.Name)
		}
	}
	return out, nil
}
