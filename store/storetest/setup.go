package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// setupSuite is the conformance tests of the setup wizard's record and
// of what the server's system information reads.
func setupSuite() []subTest {
	return []subTest{
		{"SetupWizardRecord", testSetupWizardRecord},
		{"SetupWizardRevision", testSetupWizardRevision},
		{"SystemBackendAndSize", testSystemBackendAndSize},
	}
}

func testSetupWizardRecord(t *testing.T, s *store.Store) {
	if _, err := s.GetSetupWizard(testCtx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("before any: %v", err)
	}
	w := &store.SetupWizard{Status: "pending", TokenHash: []byte{1, 2, 3, 4}, Steps: `{}`, CreatedAt: 100, UpdatedAt: 100}
	if err := s.CreateSetupWizard(testCtx, w); err != nil || w.Revision != 1 {
		t.Fatalf("create: %v, revision %d", err, w.Revision)
	}
	got, err := s.GetSetupWizard(testCtx)
	if err != nil || !reflect.DeepEqual(got, w) {
		t.Fatalf("read back %+v %v, want %+v", got, err, w)
	}
	again := &store.SetupWizard{Status: "pending", TokenHash: []byte{9}, Steps: `{}`, CreatedAt: 200, UpdatedAt: 200}
	if err := s.CreateSetupWizard(testCtx, again); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second record: %v", err)
	}
	if got, _ := s.GetSetupWizard(testCtx); !reflect.DeepEqual(got.TokenHash, w.TokenHash) {
		t.Fatalf("the second record replaced the first: %+v", got)
	}
	got.Status, got.TokenHash, got.Steps = "completed", nil, `{"realmSettings":{"name":"acme"}}`
	got.UpdatedAt, got.FinishedAt, got.FinishedBy = 300, 300, "setup-wizard"
	if err := s.UpdateSetupWizard(testCtx, got); err != nil || got.Revision != 2 {
		t.Fatalf("update: %v, revision %d", err, got.Revision)
	}
	back, err := s.GetSetupWizard(testCtx)
	if err != nil || !reflect.DeepEqual(back, got) {
		t.Fatalf("read back %+v %v, want %+v", back, err, got)
	}
	if back.TokenHash != nil {
		t.Fatalf("token hash %x, want NULL", back.TokenHash)
	}
}

func testSetupWizardRevision(t *testing.T, s *store.Store) {
	stale := &store.SetupWizard{Status: "pending", Steps: `{}`, CreatedAt: 1, UpdatedAt: 1}
	if err := s.UpdateSetupWizard(testCtx, stale); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update before any record: %v", err)
	}
	if err := s.CreateSetupWizard(testCtx, stale); err != nil {
		t.Fatal(err)
	}
	first, _ := s.GetSetupWizard(testCtx)
	second, _ := s.GetSetupWizard(testCtx)
	first.Steps = `{"a":1}`
	if err := s.UpdateSetupWizard(testCtx, first); err != nil {
		t.Fatal(err)
	}
	second.Steps = `{"b":2}`
	if err := s.UpdateSetupWizard(testCtx, second); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a write from a stale revision: %v", err)
	}
	if got, _ := s.GetSetupWizard(testCtx); got.Steps != `{"a":1}` || got.Revision != 2 {
		t.Fatalf("after the refused write: %+v", got)
	}
}

func testSystemBackendAndSize(t *testing.T, s *store.Store) {
	if b := s.Backend(); b != store.BackendSQLite && b != store.BackendPostgres {
		t.Fatalf("backend %q", b)
	}
	n, err := s.DatabaseSize(testCtx)
	if err != nil || n <= 0 {
		t.Fatalf("size %d, %v", n, err)
	}
}
