package upgrade

import (
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
)

// configChanges are the settings whose meaning changed, from the history
// of main.go's flags, README.md and the environment variables. Each is
// keyed by the schema version the binary that changed it carried: the
// builds between two schema versions share a number, so an entry at the
// database's own version may predate the database. A new setting whose
// default keeps the old behaviour (--upgrade itself, whose default is
// auto) changes no meaning and is not listed. Append an entry with the
// release that changes a setting; never edit one released.
var configChanges = []ConfigChange{
	{
		SchemaVersion: 34,
		Settings:      []string{"--base-url", "IDENPLANE_BASE_URL"},
		Before:        "an https URL was told by its lower-case scheme only: HTTPS://id.example.com served cookies without Secure and no HSTS",
		Now:           "the scheme is read in any case: an https URL, however written, makes cookies Secure and sends Strict-Transport-Security",
		Action:        "a base URL written HTTPS:// now sends HSTS: browsers then keep to HTTPS for that host and its subdomains for two years",
	},
	{
		SchemaVersion: 35,
		Settings:      []string{"IDENPLANE_ADMIN_USER", "IDENPLANE_ADMIN_PASSWORD"},
		Before:        "created the first admin user, who signed in at POST /admin/auth/login with every right",
		Now: "create the first administrator, a user of the system realm with an admin account holding every permission, " +
			"only while there is no administrator; the admin users of earlier versions are moved into the system realm at the first start",
		Action: "nothing to change; administrators now sign in through the system realm (docs/admin-accounts.md)",
	},
	{
		SchemaVersion: 36,
		Settings:      []string{"--config", "IDENPLANE_CONFIG"},
		Before:        "every configuration file was read as TOML",
		Now:           "a file named .yaml or .yml is read as YAML; any other name as TOML",
		Action:        "a TOML file named .yaml or .yml: rename it .toml",
	},
	{
		SchemaVersion: 44,
		Settings:      []string{"--db", "IDENPLANE_DB"},
		Before:        "always the path of a SQLite file",
		Now: "a postgres:// or postgresql:// URL names a PostgreSQL database (which then needs --master-key-file or " +
			"IDENPLANE_MASTER_KEY); anything else is a SQLite file",
		Action: "a SQLite path that begins with postgres:// or postgresql://: give it another",
	},
	{
		SchemaVersion: 53,
		Settings:      []string{"IDENPLANE_ADMIN_USER", "IDENPLANE_ADMIN_PASSWORD"},
		Before:        "without them, the first start made no administrator: the admin API key alone administered",
		Now: "without them, the first start also prints a one-time setup token and the wizard's address " +
			"(/setup-wizard), which makes the first administrator (docs/setup.md)",
		Action: "nothing to change; a server that had no administrator offers the wizard once",
	},
}

// changesBetween are the entries of the schema versions from to to,
// both included (see configChanges).
func changesBetween(from, to int) []ConfigChange {
	out := []ConfigChange{}
	for _, c := range configChanges {
		if c.SchemaVersion >= from && c.SchemaVersion <= to {
			out = append(out, c)
		}
	}
	return out
}

// ConfigCompatibility lists the settings whose meaning changed between
// the database's schema version (or ?from=) and this binary's. With
// nothing pending and no ?from=, it starts at the version the last
// upgrade came from, so that the list survives the upgrade it concerns.
func (s *Service) ConfigCompatibility(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st := s.deps.Store
	latest := st.LatestSchemaVersion()
	from, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if q := r.URL.Query().Get("from"); q != "" {
		if from, err = httpx.IntParam(q, "from", 0, 0, latest); err != nil {
			return err
		}
	} else if from == latest {
		ups, err := s.upgrades()
		if err != nil {
			return err
		}
		for _, u := range ups {
			if u.Status == UpgradeSucceeded && u.ToVersion == latest {
				from = u.FromVersion
				break
			}
		}
	}
	if from == latest {
		return httpx.OK(w, Compatibility{FromVersion: from, ToVersion: latest, Changes: []ConfigChange{}})
	}
	return httpx.OK(w, Compatibility{FromVersion: from, ToVersion: latest, Changes: changesBetween(from, latest)})
}
