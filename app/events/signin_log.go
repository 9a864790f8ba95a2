package events

import (
	"context"
	"log/slog"
	"strings"

	"github.com/idenplane/idenplane/store"
)

// Sign-ins leave a log line whether or not their realm keeps events: one
// per failed sign-in, per lockout and per administrator's sign-in, for
// fail2ban, CrowdSec and whoever reads the log (docs/logs.md). The
// messages and the order of the first attributes are stable: the filters
// shipped in docs/ anchor on them, and realm names hold no spaces, so the
// address is always the third attribute and a username as typed (quoted
// by the log's encoder) can never stand in for it.
const (
	msgSignInFailed = "sign-in failed"
	msgLockedOut    = "account locked"
	msgAdminSignIn  = "administrator signed in"
)

// logSignIn writes e's line, if it is one that has a line.
func (s *Service) logSignIn(ctx context.Context, realm *store.Realm, e *store.LoginEvent) {
	var msg string
	level := slog.LevelWarn
	switch {
	case e.Details["lockout"] != "":
		msg = msgLockedOut
	case e.Type == store.EventLoginError || strings.HasSuffix(string(e.Type), string(store.EventLoginError)):
		msg = msgSignInFailed
	case e.Type == store.EventLogin && s.deps.SystemRealm != nil && s.deps.SystemRealm(realm):
		msg, level = msgAdminSignIn, slog.LevelInfo
	default:
		return
	}
	name := ""
	if realm != nil {
		name = realm.Name
	}
	s.deps.Log.LogAttrs(ctx, level, msg, slog.String("realm", name), slog.String("ip", e.IPAddress),
		slog.String("username", e.Details["username"]), slog.String("reason", e.Error), slog.String("client", e.ClientID),
		slog.String("user_id", e.UserID))
}
