package app

// Benchmarks through the full handler (middleware, router, admin auth,
// JSON) over a real SQLite file. Setup, including seeding 100,000 users,
// runs once per benchmark outside the timer: b.Loop runs the body once and
// times only the loop.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

const benchSeedCount = 100_000

// benchDo sends an admin request through the handler and fails the
// benchmark unless it answers want.
func (s *testServer) benchDo(b *testing.B, method, path string, body []byte, want int) *httptest.ResponseRecorder {
	var req *http.Request
	if body != nil {
		req = httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	req.RemoteAddr = "192.0.2.1:1234"
	req.Header.Set("X-Admin-API-Key", testAPIKey)
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: status %d, want %d; body: %s", method, path, rec.Code, want, rec.Body)
	}
	return rec
}

// benchCreateRealm makes a realm with default settings over the API.
func (s *testServer) benchCreateRealm(b *testing.B, name string) *store.Realm {
	b.Helper()
	s.benchDo(b, http.MethodPost, "/admin/realms", []byte(`{"name":"`+name+`"}`), http.StatusCreated)
	realm, err := s.store.GetRealm(context.Background(), name)
	if err != nil {
		b.Fatal(err)
	}
	return realm
}

// benchSeedUsers inserts n users user000000, user000001, … straight through
// the store, in one transaction.
func (s *testServer) benchSeedUsers(b *testing.B, realm *store.Realm, n int) {
	b.Helper()
	ctx := context.Background()
	created := time.Now().UnixMilli()
	err := s.store.Tx(ctx, func(tx *store.Store) error {
		for i := range n {
			u := &store.User{
				ID: uuid.NewString(), RealmID: realm.ID, Username: fmt.Sprintf("user%06d", i),
				Email: fmt.Sprintf("user%06d@example.com", i), FirstName: "Bench", LastName: fmt.Sprintf("Person %d", i),
				Enabled: true, CreatedAt: created,
			}
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seed %d users: %v", n, err)
	}
}

// benchSeededServer is a server with realm "r" holding benchSeedCount users.
func benchSeededServer(b *testing.B) *testServer {
	b.Helper()
	s := newTestServer(b)
	s.benchSeedUsers(b, s.benchCreateRealm(b, "r"), benchSeedCount)
	return s
}

// benchUserPage decodes a user listing.
func benchUserPage(b *testing.B, rec *httptest.ResponseRecorder) (total int, usernames []string) {
	b.Helper()
	var page struct {
		Total int       `json:"total"`
		Users []userRep `json:"users"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
		b.Fatalf("decode user page: %v", err)
	}
	for _, u := range page.Users {
		usernames = append(usernames, u.Username)
	}
	return page.Total, usernames
}

// BenchmarkUserCreate creates users with a password: argon2id hashing
// (19 MiB, 2 passes) dominates.
func BenchmarkUserCreate(b *testing.B) {
	s := newTestServer(b)
	s.benchCreateRealm(b, "r")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body := fmt.Appendf(nil, `{"username":"user%d","password":"correct horse battery staple"}`, i)
		s.benchDo(b, http.MethodPost, "/admin/realms/r/users", body, http.StatusCreated)
	}
}

// BenchmarkUserCreateNoPassword is one durable INSERT behind the API.
func BenchmarkUserCreateNoPassword(b *testing.B) {
	s := newTestServer(b)
	s.benchCreateRealm(b, "r")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body := fmt.Appendf(nil, `{"username":"user%d","email":"user%d@example.com"}`, i, i)
		s.benchDo(b, http.MethodPost, "/admin/realms/r/users", body, http.StatusCreated)
	}
}

// BenchmarkUserListPage lists pages of 50 within the first 1000 of 100,000
// users.
func BenchmarkUserListPage(b *testing.B) {
	b.StopTimer()
	s := benchSeededServer(b)
	total, names := benchUserPage(b, s.benchDo(b, http.MethodGet, "/admin/realms/r/users?limit=50&skip=950", nil, http.StatusOK))
	if total != benchSeedCount || len(names) != 50 || names[0] != "user000950" {
		b.Fatalf("page: total %d, %d users, first %v", total, len(names), names[:min(1, len(names))])
	}
	b.StartTimer()
	b.ResetTimer()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		skip := (i * 50) % 1000
		i++
		s.benchDo(b, http.MethodGet, fmt.Sprintf("/admin/realms/r/users?limit=50&skip=%d", skip), nil, http.StatusOK)
	}
}

// BenchmarkUserSearch searches 100,000 users for a substring that 100 match.
func BenchmarkUserSearch(b *testing.B) {
	b.StopTimer()
	s := benchSeededServer(b)
	const path = "/admin/realms/r/users?search=user0999"
	total, names := benchUserPage(b, s.benchDo(b, http.MethodGet, path, nil, http.StatusOK))
	if total != 100 || len(names) != httpx.DefaultPageSize || names[0] != "user099900" {
		b.Fatalf("search: total %d, %d users, first %v", total, len(names), names[:min(1, len(names))])
	}
	b.StartTimer()
	b.ResetTimer()
	b.ReportAllocs()
	for b.Loop() {
		s.benchDo(b, http.MethodGet, path, nil, http.StatusOK)
	}
}

// BenchmarkUserGetByUsername looks users up by exact username among 100,000.
func BenchmarkUserGetByUsername(b *testing.B) {
	b.StopTimer()
	s := benchSeededServer(b)
	total, names := benchUserPage(b, s.benchDo(b, http.MethodGet, "/admin/realms/r/users?username=user012345&exact=true", nil, http.StatusOK))
	if total != 1 || len(names) != 1 || names[0] != "user012345" {
		b.Fatalf("lookup: total %d, users %v", total, names)
	}
	b.StartTimer()
	b.ResetTimer()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		n := (i * 7919) % benchSeedCount // spread over the whole index
		i++
		s.benchDo(b, http.MethodGet, fmt.Sprintf("/admin/realms/r/users?username=user%06d&exact=true", n), nil, http.StatusOK)
	}
}
