package scim_test

import (
	"os"
	"testing"

	"github.com/idenplane/idenplane/store/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// SCIM's filters, sorting, paging and PATCH run again with their store on
// PostgreSQL, where text compares bytewise only by the schema's COLLATE
// "C" and LIKE does not fold case on its own.
func TestOnPostgres(t *testing.T) {
	pgtest.Rerun(t, "^(TestFilter|TestFiltersFoldCase|TestListUsers|TestMappedFilters|TestPatch|TestCreateUser|TestReplaceUser|TestGroups)")
}
