package identity

import (
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The rules of groups: what every path that stores one (the admin API,
// SCIM, realm import) lets a group's name and description be.

const (
	maxGroupNameLength        = 255
	maxGroupDescriptionLength = 255
)

// ValidateGroup checks and normalizes the fields of a group about to be
// stored. '/' is refused because it separates the names of a path.
func ValidateGroup(g *store.Group) error {
	if err := validate.Identifier("name", g.Name, maxGroupNameLength); err != nil {
		return err
	}
	g.Name = strings.TrimSpace(g.Name)
	if g.Name == "" {
		return apperr.Field("name", "must not be empty")
	}
	if strings.Contains(g.Name, "/") {
		return apperr.Field("name", "must not contain '/'")
	}
	return validate.Text("description", g.Description, maxGroupDescriptionLength)
}
