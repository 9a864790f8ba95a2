package events

import (
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// knownLoginEventType says whether t is one of the types the server
// records (store.LoginEventTypes) or the _ERROR twin of one; a query for
// any other type is refused rather than answered with nothing.
func knownLoginEventType(t string) bool {
	return slices.Contains(store.LoginEventTypes, store.EventType(t)) ||
		slices.Contains(store.LoginEventTypes, store.EventType(strings.TrimSuffix(t, "_ERROR")))
}

// notRecordedByDefault are the types a realm records only when its
// enabledEventTypes names them, as Keycloak's saveByDefault=false types:
// one per API call, they would put a write behind every refresh,
// introspection and userinfo request.
var notRecordedByDefault = []store.EventType{
	store.EventRefreshToken, store.EventRefreshTokenError, store.EventIntrospectToken, store.EventIntrospectTokenError,
	store.EventUserInfoRequest, store.EventUserInfoRequestError,
}

// recordsEventType says whether realm keeps login events of type t.
func recordsEventType(realm *store.Realm, t store.EventType) bool {
	if len(realm.EnabledEventTypes) > 0 {
		return slices.Contains(realm.EnabledEventTypes, string(t))
	}
	return !slices.Contains(notRecordedByDefault, t)
}

// EnabledTypesRep shows a realm's enabled event types: [] for the default
// set.
func EnabledTypesRep(types []string) []string {
	if types == nil {
		return []string{}
	}
	return types
}

// CheckEnabledTypes validates a realm's enabledEventTypes list.
func CheckEnabledTypes(types []string) error {
	if len(types) > 2*len(store.LoginEventTypes) {
		return apperr.Field("enabledEventTypes", "lists too many types")
	}
	for _, t := range types {
		if !knownLoginEventType(t) {
			return apperr.Field("enabledEventTypes", "%q is not a login event type", t)
		}
	}
	return nil
}

// The operation types of admin events.
const (
	OperationCreate = "CREATE"
	OperationUpdate = "UPDATE"
	OperationDelete = "DELETE"
	OperationAction = "ACTION"
)

var operationTypes = []string{OperationCreate, OperationUpdate, OperationDelete, OperationAction}
