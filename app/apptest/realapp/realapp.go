// Package realapp starts the whole server for the tests of the packages
// outside app: the real App, its router and middleware, over a real SQLite
// file in t.TempDir(). A module's tests reach their handlers through it, as
// a caller would, with the helpers of package apptest.
//
// Only tests import it (TestLayers checks that no other package depends on
// it). Package app's own tests cannot (app is what it imports); they build
// their server on apptest directly.
package realapp

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/openapitest"
	"github.com/idenplane/idenplane/store"
)

// New starts the server with apptest's master key, admin API key and base
// address, logging warnings to the test's output; opts adjust its Config
// before app.New. Every request and answer is checked against the OpenAPI
// document (openapitest).
func New(t testing.TB, opts ...func(*app.Config)) *apptest.Server {
	t.Helper()
	st, path := apptest.OpenStore(t)
	return on(t, st, path, opts...)
}

// Restart starts the server anew over srv's database, as a restart of
// the process would: what the store holds stays, nothing else does.
func Restart(t testing.TB, srv *apptest.Server, opts ...func(*app.Config)) *apptest.Server {
	t.Helper()
	return on(t, srv.Store, srv.DBPath, opts...)
}

func on(t testing.TB, st *store.Store, path string, opts ...func(*app.Config)) *apptest.Server {
	t.Helper()
	cfg := app.Config{BaseURL: apptest.BaseURL, Version: "test", MasterKey: apptest.MasterKey(),
		AdminAPIKey: apptest.APIKey, Logger: apptest.Logger(t), SigningKeys: apptest.SigningKeys(app.NewPrivateKey)}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := app.New(context.Background(), st, cfg)
	if err != nil {
		t.Fatalf("new app: %v", err)
	}
	return &apptest.Server{T: t, Handler: openapitest.Handler(t, openapitest.Served(a.Handler()), a.Handler()), Store: st, DBPath: path}
}

// Start starts the server as serve does (app.Start) over st, a store the
// test opened at path, with DeferMigrations under upgrade.ModeManual: the
// whole server, or, while st waits for an upgrade, the upgrade endpoints
// alone until POST /admin/upgrade builds the rest. Answers are checked
// against the OpenAPI document of a whole server of this binary.
func Start(t testing.TB, st *store.Store, path string, opts ...func(*app.Config)) (*apptest.Server, *app.Serving) {
	t.Helper()
	cfg := app.Config{BaseURL: apptest.BaseURL, Version: "test", MasterKey: apptest.MasterKey(),
		AdminAPIKey: apptest.APIKey, Logger: apptest.Logger(t), SigningKeys: apptest.SigningKeys(app.NewPrivateKey)}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := app.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatalf("start the server: %v", err)
	}
	doc := openapitest.Served(New(t).Handler)
	return &apptest.Server{T: t, Handler: openapitest.Handler(t, doc, s), Store: st, DBPath: path}, s
}

// Live starts the server over HTTP on a loopback port, its base address
// that port's, with its background jobs running (mail delivery among
// them), for tests whose peers call it back: an upstream provider's
// redirects, a link in a mail, OpenID discovery. It answers the server and
// its base address.
func Live(t testing.TB, opts ...func(*app.Config)) (*apptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	st, path := apptest.OpenStore(t)
	cfg := app.Config{BaseURL: base, Version: "test", MasterKey: apptest.MasterKey(),
		AdminAPIKey: apptest.APIKey, Logger: apptest.Logger(t), SigningKeys: apptest.SigningKeys(app.NewPrivateKey)}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := app.New(context.Background(), st, cfg)
	if err != nil {
		t.Fatalf("new app: %v", err)
	}
	h := openapitest.Handler(t, openapitest.Served(a.Handler()), a.Handler())
	srv.Config.Handler = h
	srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.RunJobs(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	return &apptest.Server{T: t, Handler: h, Store: st, DBPath: path}, base
}
