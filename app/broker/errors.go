package broker

import (
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
)

// The pages' errors of a sign-in through a provider: each shows its own
// message (a key of the pages' catalogues) on the realm's error page.
// None says more than the person needs; the cause goes to the log and, for
// a failed upstream sign-in, to an IDENTITY_PROVIDER_LOGIN_ERROR event.

func pageError(status int, code apperr.Code, key string) *apperr.Error {
	return apperr.New(status, code, "").WithKey(key)
}

var (
	errUnknownProvider = pageError(http.StatusNotFound, apperr.CodeNotFound, "broker.error.unknownProvider")
	errNoRequest       = pageError(http.StatusBadRequest, apperr.CodeInvalidRequest, "broker.error.noRequest")
	errStaleRequest    = pageError(http.StatusBadRequest, apperr.CodeInvalidRequest, "error.staleAuthRequest")
	errState           = pageError(http.StatusBadRequest, apperr.CodeInvalidRequest, "broker.error.state")
	errLogoutState     = pageError(http.StatusBadRequest, apperr.CodeInvalidRequest, "broker.error.logoutState")
	errOtherBrowser    = pageError(http.StatusForbidden, apperr.CodeForbidden, "error.otherBrowser")
	errDenied          = pageError(http.StatusForbidden, apperr.CodeForbidden, "broker.error.denied")
	errUpstream        = pageError(http.StatusBadGateway, apperr.CodeDeliveryFailed, "broker.error.upstream")
	errToken           = pageError(http.StatusUnauthorized, apperr.CodeInvalidToken, "broker.error.token")
	errProfile         = pageError(http.StatusBadGateway, apperr.CodeDeliveryFailed, "broker.error.profile")
	errNotConfigured   = pageError(http.StatusServiceUnavailable, apperr.CodeUnavailable, "broker.error.notConfigured")
	errUserDisabled    = pageError(http.StatusForbidden, apperr.CodeForbidden, "broker.error.userDisabled")
	errLinkConflict    = pageError(http.StatusConflict, apperr.CodeConflict, "broker.error.linkConflict")
)

// failure is a sign-in through a provider that failed: what the page
// shows, the reason the event records, and the cause for the log.
type failure struct {
	page   *apperr.Error
	reason string
	cause  error
}

func (f *failure) Error() string {
	if f.cause != nil {
		return f.reason + ": " + f.cause.Error()
	}
	return f.reason
}

// Unwrap gives the renderer the page's error.
func (f *failure) Unwrap() error { return f.page }

func fail(page *apperr.Error, reason string, cause error) *failure {
	return &failure{page: page, reason: reason, cause: cause}
}
