package scim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/events"
)

// Provisioning writes admin events with SCIM as their source, when the
// realm keeps admin events; reads and refusals write none.
func TestProvisioningAdminEvents(t *testing.T) {
	p := newProvisioner(t)
	apptest.MustStatus(t, p.Admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"adminEventsEnabled": true}), http.StatusOK)
	token := p.Admin(http.MethodGet, tokensPath, nil)
	var tokens []map[string]any
	token.Decode(t, &tokens)
	u := p.create(userBody("alice"))
	id := u["id"].(string)
	apptest.MustStatus(t, p.do(http.MethodPatch, "/Users/"+id, patchBody(op("replace", "title", "Boss"))), http.StatusOK)
	apptest.MustStatus(t, p.do(http.MethodGet, "/Users/"+id, nil), http.StatusOK)
	mustSCIMError(t, p.do(http.MethodPost, "/Users", userBody("alice")), http.StatusConflict, "uniqueness")
	results := p.bulk(bulkBody(0, map[string]any{"method": "POST", "path": "/Groups", "bulkId": "g", "data": map[string]any{
		"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"}, "displayName": "staff",
		"members": []any{map[string]any{"value": id}}}}))
	gid := results[0].Location[strings.LastIndex(results[0].Location, "/")+1:]
	apptest.MustStatus(t, p.do(http.MethodDelete, "/Users/"+id, nil), http.StatusNoContent)

	r := p.Admin(http.MethodGet, "/admin/realms/acme/admin-events", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list []events.AdminEventRep
	r.Decode(t, &list)
	var got []string
	for _, e := range list {
		if e.AuthDetails.Type != "scim" {
			continue
		}
		if e.AuthDetails.UserID != tokens[0]["id"] || e.AuthDetails.Username != "idp" || e.AuthDetails.IPAddress != "192.0.2.1" {
			t.Fatalf("event's caller %+v", e.AuthDetails)
		}
		got = append(got, e.OperationType+" "+e.ResourceType+" "+e.ResourcePath)
	}
	want := []string{"DELETE USER users/" + id, "CREATE GROUP groups/" + gid, "UPDATE USER users/" + id, "CREATE USER users/" + id}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("SCIM admin events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
