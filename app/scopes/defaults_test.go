package scopes

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

// TestSeedDataValid checks the seed against the API's own rules, so
// a seeded mapper could also have been created through the API.
func TestSeedDataValid(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range defaultClientScopes() {
		if err := ValidateScope(&store.ClientScope{Name: c.name, Description: c.description, Protocol: ProtocolOIDC}); err != nil {
			t.Errorf("scope %s: %v", c.name, err)
		}
		if seen[c.name] {
			t.Errorf("scope %s seeded twice", c.name)
		}
		seen[c.name] = true
		names := map[string]bool{}
		for _, m := range c.mappers {
			if err := ValidateMapper("", ProtocolOIDC, &store.ProtocolMapper{Name: m.name, MapperType: m.mapperType,
				Protocol: ProtocolOIDC, Config: m.config}); err != nil {
				t.Errorf("mapper %s/%s: %v", c.name, m.name, err)
			}
			if names[m.name] {
				t.Errorf("mapper %s/%s seeded twice", c.name, m.name)
			}
			names[m.name] = true
		}
	}
}
