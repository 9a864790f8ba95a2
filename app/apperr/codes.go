package apperr

// Code is a stable, machine-readable error code: callers match on it,
// never on the message. docs/api-errors.md lists every one with its
// status; a test keeps the two in step.
type Code string

const (
	CodeInvalidJSON          Code = "invalid_json"
	CodeInvalidField         Code = "invalid_field"
	CodeUnknownField         Code = "unknown_field"
	CodeInvalidParameter     Code = "invalid_parameter"
	CodeInvalidRequest       Code = "invalid_request"
	CodeInvalidCeremony      Code = "invalid_ceremony"
	CodeInvalidToken         Code = "invalid_token"
	CodeUnauthorized         Code = "unauthorized"
	CodeInvalidCredentials   Code = "invalid_credentials"
	CodeReauthRequired       Code = "reauthentication_required"
	CodeForbidden            Code = "forbidden"
	CodeRegistrationDisabled Code = "registration_disabled"
	CodeNotFound             Code = "not_found"
	CodeMethodNotAllowed     Code = "method_not_allowed"
	CodeConflict             Code = "conflict"
	CodeNoSecondFactor       Code = "no_second_factor"
	CodePayloadTooLarge      Code = "payload_too_large"
	CodeUnsupportedMedia     Code = "unsupported_media_type"
	CodeTooManyRequests      Code = "too_many_requests"
	CodeInternal             Code = "internal_error"
	CodeDeliveryFailed       Code = "delivery_failed"
	CodeUnavailable          Code = "unavailable"
	CodeWebAuthnUnavailable  Code = "webauthn_unavailable"
	CodeInvalidState         Code = "invalid_state"
	CodeLastOwner            Code = "last_owner"
	// CodeGone: the endpoint is closed for good (the setup wizard, once
	// completed or skipped).
	CodeGone Code = "gone"
	// The refusals of an impersonation (app/impersonation).
	CodeImpersonationDisabled Code = "impersonation_disabled"
	CodePrivilegedUser        Code = "privileged_user"
	CodeUserDisabled          Code = "user_disabled"
	// The upgrade and rollback of the database (app/upgrade).
	CodeUpgradePending Code = "upgrade_pending"
	CodeUpgradeFailed  Code = "upgrade_failed"
	CodeNotSupported   Code = "not_supported"
)

// Codes is every code with the statuses it is answered with, in the order
// of the documentation's table.
var Codes = []struct {
	Code     Code
	Statuses []int
}{
	{CodeInvalidJSON, []int{400}},
	{CodeInvalidField, []int{400}},
	{CodeUnknownField, []int{400}},
	{CodeInvalidParameter, []int{400}},
	{CodeInvalidRequest, []int{400}},
	{CodeInvalidCeremony, []int{400}},
	{CodeInvalidToken, []int{400, 401}},
	{CodeUnauthorized, []int{401}},
	{CodeInvalidCredentials, []int{401}},
	{CodeReauthRequired, []int{401}},
	{CodeForbidden, []int{403}},
	{CodeRegistrationDisabled, []int{403}},
	{CodeNotFound, []int{404}},
	{CodeMethodNotAllowed, []int{405}},
	{CodeConflict, []int{409}},
	{CodeNoSecondFactor, []int{409}},
	{CodePayloadTooLarge, []int{413}},
	{CodeUnsupportedMedia, []int{415}},
	{CodeTooManyRequests, []int{429}},
	{CodeInternal, []int{500}},
	{CodeDeliveryFailed, []int{502}},
	{CodeUnavailable, []int{503}},
	{CodeWebAuthnUnavailable, []int{503}},
	{CodeInvalidState, []int{409}},
	{CodeLastOwner, []int{409}},
	{CodeGone, []int{410}},
	{CodeImpersonationDisabled, []int{403}},
	{CodePrivilegedUser, []int{403}},
	{CodeUserDisabled, []int{409}},
	{CodeUpgradePending, []int{503}},
	{CodeUpgradeFailed, []int{500}},
	{CodeNotSupported, []int{501}},
}
