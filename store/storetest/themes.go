package storetest

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// themeSuite is the conformance tests of the themes, their published
// versions and their images.
func themeSuite() []subTest {
	return []subTest{
		{"ThemeCRUD", testThemeCRUD},
		{"ThemeVersions", testThemeVersions},
		{"ThemeAssets", testThemeAssets},
	}
}

func themeTest(n int, realmID, name string) *store.Theme {
	return &store.Theme{ID: orgTestID(n), RealmID: realmID, Name: name, Description: "about " + name,
		Draft: `{"preset":"idenplane"}`, CreatedAt: 100, UpdatedAt: 200}
}

func testThemeCRUD(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	th := themeTest(61, orgTestRealm, "brand")
	if err := s.CreateTheme(testCtx, th); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetTheme(testCtx, orgTestRealm, th.ID); err != nil || !reflect.DeepEqual(got, th) {
		t.Fatalf("read back %+v %v, want %+v", got, err, th)
	}
	if got, err := s.GetThemeByName(testCtx, orgTestRealm, "brand"); err != nil || !reflect.DeepEqual(got, th) {
		t.Fatalf("by name %+v %v", got, err)
	}
	if _, err := s.GetTheme(testCtx, orgTestRealm2, th.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("through another realm: %v", err)
	}
	if _, err := s.GetThemeByName(testCtx, orgTestRealm2, "brand"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("by name through another realm: %v", err)
	}
	var ce *store.ConflictError
	dup := themeTest(62, orgTestRealm, "brand")
	if err := s.CreateTheme(testCtx, dup); !errors.As(err, &ce) || ce.Column != "name" {
		t.Errorf("a name the realm has: %v", err)
	}
	dup.RealmID = orgTestRealm2
	if err := s.CreateTheme(testCtx, dup); err != nil {
		t.Fatalf("the same name in another realm: %v", err)
	}
	other := themeTest(63, orgTestRealm, "autumn")
	if err := s.CreateTheme(testCtx, other); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListThemes(testCtx, orgTestRealm)
	if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], other) || !reflect.DeepEqual(list[1], th) {
		t.Fatalf("list %+v %v", list, err)
	}
	if n, err := s.CountThemes(testCtx, orgTestRealm); err != nil || n != 2 {
		t.Errorf("count %d %v", n, err)
	}
	other.Name = "brand"
	if err := s.UpdateTheme(testCtx, other); !errors.As(err, &ce) || ce.Column != "name" {
		t.Errorf("renamed onto a taken name: %v", err)
	}
	th.Name, th.Description, th.Draft, th.UpdatedAt = "brand-2", "", `{"preset":"high-contrast"}`, 300
	if err := s.UpdateTheme(testCtx, th); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetTheme(testCtx, orgTestRealm, th.ID); err != nil || !reflect.DeepEqual(got, th) {
		t.Errorf("after update %+v %v, want %+v", got, err, th)
	}
	moved := *th
	moved.RealmID = orgTestRealm2
	if err := s.UpdateTheme(testCtx, &moved); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("updated through another realm: %v", err)
	}
	if err := s.DeleteTheme(testCtx, orgTestRealm2, th.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted through another realm: %v", err)
	}
	if err := s.DeleteTheme(testCtx, orgTestRealm, th.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTheme(testCtx, orgTestRealm, th.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted twice: %v", err)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if list, err := s.ListThemes(testCtx, orgTestRealm); err != nil || len(list) != 0 {
		t.Errorf("a deleted realm's themes: %+v %v", list, err)
	}
	if list, err := s.ListThemes(testCtx, orgTestRealm2); err != nil || len(list) != 1 {
		t.Errorf("the other realm's themes: %+v %v", list, err)
	}
}

func testThemeVersions(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	th := themeTest(64, orgTestRealm, "brand")
	if err := s.CreateTheme(testCtx, th); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LatestThemeVersion(testCtx, orgTestRealm, "brand"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("latest of a theme never published: %v", err)
	}
	for i, content := range []string{`{"v":1}`, `{"v":2}`, `{"v":3}`} {
		v, err := s.PublishTheme(testCtx, orgTestRealm, th.ID, content, int64(1000+i))
		want := &store.ThemeVersion{ThemeID: th.ID, RealmID: orgTestRealm, Version: int64(i + 1), Content: content, PublishedAt: int64(1000 + i)}
		if err != nil || !reflect.DeepEqual(v, want) {
			t.Fatalf("publish %d: %+v %v, want %+v", i+1, v, err, want)
		}
	}
	if _, err := s.PublishTheme(testCtx, orgTestRealm2, th.ID, `{}`, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("published through another realm: %v", err)
	}
	if got, err := s.GetTheme(testCtx, orgTestRealm, th.ID); err != nil || got.Latest != 3 {
		t.Errorf("the theme's latest: %+v %v", got, err)
	}
	latest, err := s.LatestThemeVersion(testCtx, orgTestRealm, "brand")
	if err != nil || latest.Version != 3 || latest.Content != `{"v":3}` {
		t.Errorf("latest %+v %v", latest, err)
	}
	if v, err := s.GetThemeVersion(testCtx, orgTestRealm, th.ID, 2); err != nil || v.Content != `{"v":2}` {
		t.Errorf("version 2: %+v %v", v, err)
	}
	if _, err := s.GetThemeVersion(testCtx, orgTestRealm, th.ID, 4); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a version never published: %v", err)
	}
	if _, err := s.GetThemeVersion(testCtx, orgTestRealm2, th.ID, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a version through another realm: %v", err)
	}
	list, err := s.ListThemeVersions(testCtx, orgTestRealm, th.ID, 0, 10)
	if err != nil || len(list) != 3 || list[0].Version != 3 || list[2].Version != 1 {
		t.Fatalf("list %+v %v", list, err)
	}
	if page, err := s.ListThemeVersions(testCtx, orgTestRealm, th.ID, 1, 1); err != nil || len(page) != 1 || page[0].Version != 2 {
		t.Errorf("a page of the list: %+v %v", page, err)
	}
	// A draft written after a publication leaves the versions as they were.
	th.Draft, th.UpdatedAt = `{"v":"draft"}`, 5000
	if err := s.UpdateTheme(testCtx, th); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetThemeVersion(testCtx, orgTestRealm, th.ID, 3); err != nil || v.Content != `{"v":3}` {
		t.Errorf("version 3 after the draft changed: %+v %v", v, err)
	}
	if err := s.DeleteTheme(testCtx, orgTestRealm, th.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := s.ListThemeVersions(testCtx, orgTestRealm, th.ID, 0, 10); err != nil || len(list) != 0 {
		t.Errorf("a deleted theme's versions: %+v %v", list, err)
	}
	again := themeTest(65, orgTestRealm, "brand")
	if err := s.CreateTheme(testCtx, again); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishTheme(testCtx, orgTestRealm, again.ID, `{}`, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LatestThemeVersion(testCtx, orgTestRealm, "brand"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted realm's published theme: %v", err)
	}
}

func testThemeAssets(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	data := []byte("\x89PNG\r\n\x1a\n not really")
	a := &store.ThemeAsset{ID: orgTestID(66), RealmID: orgTestRealm, ContentType: "image/png", Width: 64, Height: 32,
		SHA256: bytes.Repeat([]byte{7}, 32), Data: data, Size: len(data), CreatedAt: 100}
	if err := s.CreateThemeAsset(testCtx, a); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetThemeAsset(testCtx, orgTestRealm, a.ID); err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("read back %+v %v, want %+v", got, err, a)
	}
	info := *a
	info.Data = nil
	if got, err := s.ThemeAssetInfo(testCtx, orgTestRealm, a.ID); err != nil || !reflect.DeepEqual(got, &info) {
		t.Fatalf("info %+v %v, want %+v", got, err, &info)
	}
	if _, err := s.GetThemeAsset(testCtx, orgTestRealm2, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("through another realm: %v", err)
	}
	if _, err := s.ThemeAssetInfo(testCtx, orgTestRealm2, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("info through another realm: %v", err)
	}
	var ce *store.ConflictError
	if err := s.CreateThemeAsset(testCtx, a); !errors.As(err, &ce) {
		t.Errorf("the same ID twice: %v", err)
	}
	if n, err := s.CountThemeAssets(testCtx, orgTestRealm); err != nil || n != 1 {
		t.Errorf("count %d %v", n, err)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetThemeAsset(testCtx, orgTestRealm, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted realm's asset: %v", err)
	}
}
