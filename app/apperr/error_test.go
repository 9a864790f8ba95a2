package apperr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// Only the store's not-found, bare or wrapped, is a not-found; an *Error
// of code not_found already has its message and is not one to name again.
func TestIsNotFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"store not found", store.ErrNotFound, true},
		{"wrapped store not found", fmt.Errorf("get user: %w", store.ErrNotFound), true},
		{"store conflict", store.ErrConflict, false},
		{"other error", errors.New("disk full"), false},
		{"apperr not found", NotFound("user u1"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsNotFound(tc.err); got != tc.want {
				t.Errorf("IsNotFound(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
