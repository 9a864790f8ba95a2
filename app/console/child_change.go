package console

import (
	"net/http"
	"net/url"
)

// childChange is a change to one item listed on a record's page (an
// organization's member or invitation, an identity's credential): asked
// first on a page of its own, then made with one API call that leads back
// to the record's page. Its console address is the item's with the
// change's name after it; its API address the item's with call after it.
type childChange struct {
	kind, list, item string // the record's kind, the list's path under it, the item's path variable
	name             string // the console address's last segment ("remove", "revoke")
	method, call     string // the API call
	ask, argVar      string // the question and the path variable it names
	button, done     string
}

func (ch childChange) paths(r *http.Request) (realm, id, item string) {
	return pathVar(r, "realm"), pathVar(r, "id"), url.PathEscape(pathVar(r, ch.item))
}

// confirm asks before the change.
func (ch childChange) confirm(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id, item := ch.paths(r)
	return c.confirm(w, r, ch.kind, ch.ask, pathVar(r, ch.argVar),
		one(realm, ch.kind, id, ch.list+item+"/"+ch.name), one(realm, ch.kind, id, ""), ch.button)
}

// make makes the change.
func (ch childChange) make(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id, item := ch.paths(r)
	if err := c.call(r, ch.method, apiOne(realm, ch.kind, id, ch.list+item+ch.call), nil, nil); err != nil {
		return err
	}
	redirect(w, r, one(realm, ch.kind, id, ""), ch.done)
	return nil
}

var (
	orgMemberRemoval = childChange{kind: orgKind, list: "/members/", item: "userId", name: "remove",
		method: http.MethodDelete, ask: "console.org.removeConfirm", argVar: "userId",
		button: "console.org.remove", done: "console.done.orgMemberRemoved"}
	orgInvitationRevocation = childChange{kind: orgKind, list: "/invitations/", item: "invitationId", name: "revoke",
		method: http.MethodDelete, ask: "console.org.revokeConfirm", argVar: "id",
		button: "console.org.revoke", done: "console.done.invitationRevoked"}
	nhiCredentialRevocation = childChange{kind: nhiKind, list: "/credentials/", item: "credentialId", name: "revoke",
		method: http.MethodPost, call: "/revoke", ask: "console.nhi.revokeConfirm", argVar: "credentialId",
		button: "console.nhi.revoke", done: "console.done.credentialRevoked"}
)
