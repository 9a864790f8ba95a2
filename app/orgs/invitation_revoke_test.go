package orgs_test

import (
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/orgs"
)

// The answer of an invitation's creation carries its link, once: the
// mail's; a revoked invitation is no longer pending and its link refused,
// and a second revocation is a 404.
func TestInvitationLinkOnceAndRevoke(t *testing.T) {
	s, _ := newMailServer(t)
	secret, _ := passwordClient(t, s)
	createOrg(s, map[string]any{"slug": "acme-corp", "name": "Acme Corp"})
	r := s.Admin(http.MethodPost, orgsPath+"/acme-corp/invitations", map[string]any{"email": "bob@example.test"})
	apptest.MustStatus(t, r, http.StatusCreated)
	var inv orgs.InvitationRep
	r.Decode(t, &inv)
	mailed, token := mailedInvitation(t, s, "bob@example.test")
	if inv.Link == "" || inv.Link != mailed {
		t.Fatalf("the answer's link %q, the mail's %q", inv.Link, mailed)
	}
	var pending []orgs.InvitationRep
	s.Admin(http.MethodGet, orgsPath+"/acme-corp/invitations", nil).Decode(t, &pending)
	if len(pending) != 1 || pending[0].Link != "" {
		t.Fatalf("the listing %+v: one invitation, without its link", pending)
	}

	apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/acme-corp/invitations/"+inv.ID, nil), http.StatusNoContent)
	s.Admin(http.MethodGet, orgsPath+"/acme-corp/invitations", nil).Decode(t, &pending)
	if len(pending) != 0 {
		t.Fatalf("pending after the revocation %+v", pending)
	}
	apptest.MustError(t, s.Admin(http.MethodDelete, orgsPath+"/acme-corp/invitations/"+inv.ID, nil), 404, "not_found", "")
	s.CreateUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": "correct horse 2"})
	bob := userToken(t, s, secret, "bob", "correct horse 2")
	apptest.MustError(t, accept(s, "acme-corp", token, bob), 400, "invalid_token", "token")
}
