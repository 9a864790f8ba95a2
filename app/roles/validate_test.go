package roles_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/store"
)

// Validate is what the admin API and realm import both check a role with.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name, description string
		field             string // "" when the role is valid
	}{
		{name: "viewer"},
		{name: "read token", description: "May read the upstream token"},
		{name: "", field: "name"},
		{name: " viewer", field: "name"},
		{name: "a/b", field: "name"},
		{name: ".", field: "name"},
		{name: "..", field: "name"},
		{name: strings.Repeat("r", 256), field: "name"},
		{name: "viewer", description: strings.Repeat("d", 256), field: "description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := roles.Validate(&store.Role{Name: tc.name, Description: tc.description})
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *apperr.Error
			if !errors.As(err, &e) || e.Field != tc.field || e.Status != 400 {
				t.Fatalf("got %v, want a 400 naming field %q", err, tc.field)
			}
		})
	}
}
