package events

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// AdminEventRep is an admin event as the API shows it.
type AdminEventRep struct {
	ID             string          `json:"id"`
	Time           int64           `json:"time"`
	RealmID        string          `json:"realmId"`
	OperationType  string          `json:"operationType"`
	ResourceType   string          `json:"resourceType"`
	ResourcePath   string          `json:"resourcePath"`
	AuthDetails    AuthDetailsRep  `json:"authDetails"`
	Representation json.RawMessage `json:"representation"`
}

// AuthDetailsRep is who made the change an admin event records.
type AuthDetailsRep struct {
	Type      string `json:"type"`
	UserID    string `json:"userId,omitempty"`
	Username  string `json:"username,omitempty"`
	IPAddress string `json:"ipAddress"`
}

func toAdminEventRep(e *store.AdminEvent) AdminEventRep {
	rep := json.RawMessage(e.Representation)
	if len(rep) == 0 {
		rep = json.RawMessage("null")
	}
	return AdminEventRep{
		ID: e.ID, Time: e.Time, RealmID: e.RealmID, OperationType: e.OperationType, ResourceType: e.ResourceType,
		ResourcePath: e.ResourcePath, Representation: rep,
		AuthDetails: AuthDetailsRep{Type: e.AuthType, UserID: e.AuthUserID, Username: e.AuthUsername, IPAddress: e.IPAddress},
	}
}

var resourceTypePattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// adminEventQuery reads the realm and the filters of an admin event query
// or export.
func (s *Service) adminEventQuery(r *http.Request, export bool) (*store.Realm, store.AdminEventFilter, error) {
	var f store.AdminEventFilter
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, f, err
	}
	q := r.URL.Query()
	if f.OperationTypes, err = eventListParam(q, "operationType", func(v string) bool {
		return slices.Contains(operationTypes, v)
	}, "one of "+strings.Join(operationTypes, ", ")); err != nil {
		return nil, f, err
	}
	if f.ResourceTypes, err = eventListParam(q, "resourceType", resourceTypePattern.MatchString,
		"a resource type such as USER or CLIENT_ROLE"); err != nil {
		return nil, f, err
	}
	// Keycloak writes a prefix with a trailing "*".
	f.ResourcePathPrefix = strings.TrimSuffix(q.Get("resourcePath"), "*")
	if f.AuthUserID, err = eventUUIDParam(q, "authUserId"); err != nil {
		return nil, f, err
	}
	if err := eventWindow(q, export, &f.EventWindow); err != nil {
		return nil, f, err
	}
	return realm, f, nil
}

// ListAdminEvents answers a page of the realm's admin events, newest
// first, by the query's filters.
func (s *Service) ListAdminEvents(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.adminEventQuery(r, false)
	if err != nil {
		return err
	}
	events, err := s.deps.Store.ListAdminEvents(r.Context(), realm.ID, f)
	if err != nil {
		return err
	}
	reps := make([]AdminEventRep, len(events))
	for i, e := range events {
		reps[i] = toAdminEventRep(e)
	}
	httpx.WriteJSON(w, http.StatusOK, reps)
	return nil
}
