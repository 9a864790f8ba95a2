package events

import (
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// loginEventTypes are the login event types the server records, as Keycloak
// names them; a query for any other type is refused rather than answered
// with nothing.
var loginEventTypes = []string{
	"LOGIN", "LOGIN_ERROR", "REGISTER", "REGISTER_ERROR", "LOGOUT", "LOGOUT_ERROR",
	"CODE_TO_TOKEN", "CODE_TO_TOKEN_ERROR", "REFRESH_TOKEN", "REFRESH_TOKEN_ERROR",
	"CLIENT_LOGIN", "CLIENT_LOGIN_ERROR", "INTROSPECT_TOKEN", "INTROSPECT_TOKEN_ERROR",
	"TOKEN_EXCHANGE", "USER_INFO_REQUEST", "UPDATE_PASSWORD", "UPDATE_PROFILE",
	"SEND_VERIFY_EMAIL", "VERIFY_EMAIL", "SEND_RESET_PASSWORD", "RESET_PASSWORD",
	"UPDATE_TOTP", "REMOVE_TOTP", "UPDATE_CREDENTIAL", "REMOVE_CREDENTIAL", "GRANT_CONSENT", "REVOKE_GRANT",
	"OAUTH2_DEVICE_AUTH", "OAUTH2_DEVICE_CODE_TO_TOKEN", store.EventImpersonate, store.EventImpersonateEnd,
	"PERMANENT_LOCKOUT", "USER_DISABLED_BY_TEMPORARY_LOCKOUT",
	"UPDATE_EMAIL", "DELETE_ACCOUNT", "DELETE_ACCOUNT_SCHEDULED", "DELETE_ACCOUNT_CANCELLED",
	"IDENTITY_PROVIDER_LOGIN", "IDENTITY_PROVIDER_FIRST_LOGIN", "IDENTITY_PROVIDER_LINK_ACCOUNT",
	"FEDERATED_IDENTITY_LINK", "REMOVE_FEDERATED_IDENTITY",
}

// knownLoginEventType says whether t is one of loginEventTypes or the
// _ERROR twin of one.
func knownLoginEventType(t string) bool {
	return slices.Contains(loginEventTypes, t) || slices.Contains(loginEventTypes, strings.TrimSuffix(t, "_ERROR"))
}

// notRecordedByDefault are the types a realm records only when its
// enabledEventTypes names them, as Keycloak's saveByDefault=false types:
// one per API call, they would put a write behind every refresh,
// introspection and userinfo request.
var notRecordedByDefault = []string{
	"REFRESH_TOKEN", "REFRESH_TOKEN_ERROR", "INTROSPECT_TOKEN", "INTROSPECT_TOKEN_ERROR",
	"USER_INFO_REQUEST", "USER_INFO_REQUEST_ERROR",
}

// recordsEventType says whether realm keeps login events of type t.
func recordsEventType(realm *store.Realm, t string) bool {
	if len(realm.EnabledEventTypes) > 0 {
		return slices.Contains(realm.EnabledEventTypes, t)
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
	if len(types) > 2*len(loginEventTypes) {
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
