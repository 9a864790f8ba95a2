package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func pluginSuite() []subTest {
	return []subTest{{"PluginStates", testPluginStates}}
}

func testPluginStates(t *testing.T, s *store.Store) {
	if _, err := s.GetPluginState(testCtx, "audit-tap"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("state of a plugin never stored: %v", err)
	}
	a := &store.PluginState{Name: "audit-tap", State: "disabled", UpdatedAt: 10}
	b := &store.PluginState{Name: "acme-claims", State: "failed", Reason: "call timed out after 100ms", UpdatedAt: 20}
	for _, p := range []*store.PluginState{a, b} {
		if err := s.SavePluginState(testCtx, p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetPluginState(testCtx, "acme-claims")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "plugin state", got, b)
	a.State, a.UpdatedAt = "enabled", 30
	if err := s.SavePluginState(testCtx, a); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListPluginStates(testCtx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	mustEqual(t, "first by name", list[0], b)
	mustEqual(t, "saved again", list[1], a)
	if err := s.DeletePluginState(testCtx, "acme-claims"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePluginState(testCtx, "acme-claims"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
	if _, err := s.GetPluginState(testCtx, "acme-claims"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted state: %v", err)
	}
}
