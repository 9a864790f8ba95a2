package migration

import "fmt"

// Report is what an import answers: what it imported and what it left out,
// each with its JSON path in the request.
type Report struct {
	// Realm is the realm imported into.
	Realm string `json:"realm"`
	// DryRun: everything was checked and written in a transaction that
	// was then rolled back; nothing is kept.
	DryRun bool `json:"dryRun"`
	// Counts are the numbers of imported items of each kind.
	Counts map[string]int `json:"counts"`
	// Imported lists every item imported.
	Imported []Item `json:"imported"`
	// Skipped lists what was left out, and why.
	Skipped []Item `json:"skipped"`
}

// Item is one thing of the export: its JSON path, its kind, its name and,
// when it was left out or changed on the way, why.
type Item struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// The kinds of items.
const (
	KindRealm          = "realm"
	KindSetting        = "setting"
	KindClient         = "client"
	KindClientScope    = "clientScope"
	KindMapper         = "protocolMapper"
	KindRole           = "role"
	KindGroup          = "group"
	KindUser           = "user"
	KindCredential     = "credential"
	KindRoleMapping    = "roleMapping"
	KindMembership     = "groupMembership"
	KindAttribute      = "attribute"
	KindRequiredAction = "requiredAction"
	KindProvider       = "identityProvider"
	KindFederatedLink  = "federatedIdentity"
)

func newReport() *Report {
	return &Report{Counts: map[string]int{}, Imported: []Item{}, Skipped: []Item{}}
}

func (r *Report) imported(path, kind, name string) {
	r.Imported = append(r.Imported, Item{Path: path, Kind: kind, Name: name})
	r.Counts[kind]++
}

func (r *Report) skip(path, kind, name, format string, args ...any) {
	r.Skipped = append(r.Skipped, Item{Path: path, Kind: kind, Name: name, Reason: fmt.Sprintf(format, args...)})
}
