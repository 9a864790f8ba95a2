package mail

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// VerifyEmailLifetime is how long a verification link works.
const VerifyEmailLifetime = 12 * time.Hour

// VerifyEmail is the mail carrying a link that verifies the user's address.
var VerifyEmail = LinkMail{Name: "verify-email", Key: "mail.verifyEmail", Lifetime: VerifyEmailLifetime, Unit: time.Hour}

// Verification is a verify-email token and its mail, ready to be written.
type Verification struct {
	s     *Service
	realm *store.Realm
	user  *store.User
	token string
	msg   Message
}

// NewVerification makes a token and renders the mail with its link for u,
// who must have an email address, in l's language.
func (s *Service) NewVerification(l *ui.Localizer, realm *store.Realm, u *store.User) (*Verification, error) {
	token, err := NewActionToken()
	if err != nil {
		return nil, err
	}
	link := s.deps.BaseURL + "/realms/" + url.PathEscape(realm.Name) + "/verify-email?" + url.Values{"token": {token}}.Encode()
	msg, err := VerifyEmail.Render(l, realm, u, link)
	if err != nil {
		return nil, err
	}
	return &Verification{s: s, realm: realm, user: u, token: token, msg: msg}, nil
}

// Queue stores the token's hash and puts the mail in the outbox through
// tx; the caller wakes the worker once tx commits.
func (v *Verification) Queue(ctx context.Context, tx *store.Store) error {
	now := v.s.deps.Now()
	if err := tx.CreateActionToken(ctx, &store.ActionToken{Hash: store.HashToken(v.token), RealmID: v.realm.ID,
		UserID: v.user.ID, Kind: store.ActionVerifyEmail, Email: v.user.Email, CreatedAt: now.UnixMilli(),
		ExpiresAt: now.Add(VerifyEmailLifetime).UnixMilli()}); err != nil {
		return err
	}
	return v.s.Enqueue(ctx, tx, v.realm, v.msg)
}

// NewActionToken is the secret of a single-use link: 256 random bits,
// URL-safe.
func NewActionToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
