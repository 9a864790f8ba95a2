package signin

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
)

// FormError is a refused request that a browser is answered with a page
// of its own: the form again with the message at its field, or the page
// the browser goes on to. Every other renderer sees the error it holds.
type FormError struct {
	err  error
	page func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error
}

func (e *FormError) Error() string { return e.err.Error() }
func (e *FormError) Unwrap() error { return e.err }

// Page renders the page of the refusal, e being the refusal classified.
func (e *FormError) Page(w http.ResponseWriter, r *http.Request, ae *apperr.Error) error {
	return e.page(w, r, ae)
}

// WithPage is err with the page a browser gets for it, when err refuses
// the request (a status below 500); a fault of the server stays as it is,
// for the error page.
func WithPage(err error, page func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error) error {
	if e := httpx.Classify(err); e.Status < http.StatusInternalServerError {
		return &FormError{err: err, page: page}
	}
	return err
}

// ThrottleRefusal is err, when it is a throttled credential check, as a 429
// saying message to an API caller and key on a page; any other err as it
// is.
func ThrottleRefusal(err error, message, key string) error {
	var t *identity.ThrottledError
	if !errors.As(err, &t) {
		return err
	}
	return apperr.TooMany(t.Wait, "%s", message).WithKey(key)
}
