package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/registration"
)

// describeRegistration describes self-service registration: the public
// API, and the admin API of its fields, settings and pending users.
func describeRegistration(describe func(method, path string, o openapi.Op)) {
	const base = "/realms/{realm}/registration"
	describe(http.MethodGet, base+"/fields", openapi.Op{Summary: "List the registration form's extra fields",
		Description: "403 when the realm does not allow registration.", Response: []registration.RegistrationFormField{}})
	describe(http.MethodPost, base+"/register", openapi.Op{Summary: "Register a user",
		Description: "The user may wait for an administrator's approval (`approvalPending`) and for the verification of its email.",
		Request:     registration.RegisterBody{}, Status: http.StatusCreated, Response: registration.RegistrationResult[userRep]{}})
	describe(http.MethodPost, base+"/verify-email", openapi.Op{Summary: "Verify an email address with the mailed link's token",
		Request: registration.VerifyEmailBody{}, Response: registration.EmailVerifiedRep{}})
	describe(http.MethodPost, base+"/resend-verification", openapi.Op{Summary: "Mail a new verification link",
		Description: "The answer is the same whether or not an unverified account has the address.",
		Request:     registration.ResendVerificationBody{}, Status: http.StatusAccepted, Response: registration.ResendRep{}})
	fields := base + "/admin/fields"
	describe(http.MethodGet, fields, openapi.Op{Summary: "List the registration form's extra fields, disabled ones too", Response: []registration.RegistrationFieldRep{}})
	describe(http.MethodPost, fields, openapi.Op{Summary: "Add a field to the registration form",
		Request: registration.RegistrationFieldBody{}, Status: http.StatusCreated, Response: registration.RegistrationFieldRep{}})
	describe(http.MethodPut, fields+"/{fieldId}", openapi.Op{Summary: "Replace a registration field",
		Request: registration.RegistrationFieldBody{}, Response: registration.RegistrationFieldRep{}})
	describe(http.MethodDelete, fields+"/{fieldId}", openapi.Op{Summary: "Remove a registration field", Status: http.StatusNoContent})
	describe(http.MethodGet, base+"/admin/settings", openapi.Op{Summary: "Read the registration settings", Response: registration.RegistrationSettingsRep{}})
	describe(http.MethodPut, base+"/admin/settings", openapi.Op{Summary: "Change the registration settings",
		Description: "With moderation on, new users wait for an administrator's approval.",
		Request:     registration.RegistrationSettingsBody{}, Response: registration.RegistrationSettingsRep{}})
	describe(http.MethodGet, base+"/pending", openapi.Op{Summary: "List the users awaiting approval, oldest first", Response: []pendingUserRep{}})
	describe(http.MethodPost, base+"/approve/{userId}", openapi.Op{Summary: "Approve a pending user", Response: pendingUserRep{}})
	describe(http.MethodPost, base+"/reject/{userId}", openapi.Op{Summary: "Reject a pending user",
		Description: "The user stays, rejected: it cannot sign in, and its username and email stay taken.", Response: pendingUserRep{}})
}
