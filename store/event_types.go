package store

// EventType is the type of a login event, as Keycloak names it.
type EventType string

// The login event types the server records. A failure is the _ERROR twin
// of what failed.
const (
	EventLogin                       EventType = "LOGIN"
	EventLoginError                  EventType = "LOGIN_ERROR"
	EventRegister                    EventType = "REGISTER"
	EventRegisterError               EventType = "REGISTER_ERROR"
	EventLogout                      EventType = "LOGOUT"
	EventLogoutError                 EventType = "LOGOUT_ERROR"
	EventCodeToToken                 EventType = "CODE_TO_TOKEN"
	EventCodeToTokenError            EventType = "CODE_TO_TOKEN_ERROR"
	EventRefreshToken                EventType = "REFRESH_TOKEN"
	EventRefreshTokenError           EventType = "REFRESH_TOKEN_ERROR"
	EventClientLogin                 EventType = "CLIENT_LOGIN"
	EventClientLoginError            EventType = "CLIENT_LOGIN_ERROR"
	EventIntrospectToken             EventType = "INTROSPECT_TOKEN"
	EventIntrospectTokenError        EventType = "INTROSPECT_TOKEN_ERROR"
	EventTokenExchange               EventType = "TOKEN_EXCHANGE"
	EventTokenExchangeError          EventType = "TOKEN_EXCHANGE_ERROR"
	EventUserInfoRequest             EventType = "USER_INFO_REQUEST"
	EventUserInfoRequestError        EventType = "USER_INFO_REQUEST_ERROR"
	EventUpdatePassword              EventType = "UPDATE_PASSWORD"
	EventUpdateProfile               EventType = "UPDATE_PROFILE"
	EventSendVerifyEmail             EventType = "SEND_VERIFY_EMAIL"
	EventVerifyEmail                 EventType = "VERIFY_EMAIL"
	EventSendResetPassword           EventType = "SEND_RESET_PASSWORD"
	EventResetPassword               EventType = "RESET_PASSWORD"
	EventUpdateTOTP                  EventType = "UPDATE_TOTP"
	EventRemoveTOTP                  EventType = "REMOVE_TOTP"
	EventUpdateCredential            EventType = "UPDATE_CREDENTIAL"
	EventRemoveCredential            EventType = "REMOVE_CREDENTIAL"
	EventGrantConsent                EventType = "GRANT_CONSENT"
	EventRevokeGrant                 EventType = "REVOKE_GRANT"
	EventDeviceAuth                  EventType = "OAUTH2_DEVICE_AUTH"
	EventDeviceCodeToTokenError      EventType = "OAUTH2_DEVICE_CODE_TO_TOKEN_ERROR"
	EventDeviceCodeToToken           EventType = "OAUTH2_DEVICE_CODE_TO_TOKEN"
	EventImpersonate                 EventType = "IMPERSONATE"
	EventImpersonateEnd              EventType = "IMPERSONATE_END"
	EventPermanentLockout            EventType = "PERMANENT_LOCKOUT"
	EventTemporaryLockout            EventType = "USER_DISABLED_BY_TEMPORARY_LOCKOUT"
	EventUpdateEmail                 EventType = "UPDATE_EMAIL"
	EventDeleteAccount               EventType = "DELETE_ACCOUNT"
	EventDeleteAccountScheduled      EventType = "DELETE_ACCOUNT_SCHEDULED"
	EventDeleteAccountCancelled      EventType = "DELETE_ACCOUNT_CANCELLED"
	EventIdentityProviderLogin       EventType = "IDENTITY_PROVIDER_LOGIN"
	EventIdentityProviderLoginError  EventType = "IDENTITY_PROVIDER_LOGIN_ERROR"
	EventIdentityProviderFirstLogin  EventType = "IDENTITY_PROVIDER_FIRST_LOGIN"
	EventIdentityProviderLinkAccount EventType = "IDENTITY_PROVIDER_LINK_ACCOUNT"
	EventFederatedIdentityLink       EventType = "FEDERATED_IDENTITY_LINK"
	EventRemoveFederatedIdentity     EventType = "REMOVE_FEDERATED_IDENTITY"
)

// LoginEventTypes are the types a realm may record and be asked for, each
// with its _ERROR twin.
var LoginEventTypes = []EventType{
	EventLogin, EventRegister, EventLogout, EventCodeToToken, EventRefreshToken, EventClientLogin, EventIntrospectToken,
	EventTokenExchange, EventUserInfoRequest, EventUpdatePassword, EventUpdateProfile, EventSendVerifyEmail,
	EventVerifyEmail, EventSendResetPassword, EventResetPassword, EventUpdateTOTP, EventRemoveTOTP, EventUpdateCredential,
	EventRemoveCredential, EventGrantConsent, EventRevokeGrant, EventDeviceAuth, EventDeviceCodeToToken, EventImpersonate,
	EventImpersonateEnd, EventPermanentLockout, EventTemporaryLockout, EventUpdateEmail, EventDeleteAccount,
	EventDeleteAccountScheduled, EventDeleteAccountCancelled, EventIdentityProviderLogin, EventIdentityProviderFirstLogin,
	EventIdentityProviderLinkAccount, EventFederatedIdentityLink, EventRemoveFederatedIdentity,
}
