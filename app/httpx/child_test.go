package httpx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

type child struct{ RealmID, ID string }

func TestChild(t *testing.T) {
	errDisk := errors.New("disk I/O error")
	for _, tc := range []struct {
		name    string
		path    string
		getErr  error  // what the getter answers
		want    *child // the loaded child, nil for none
		wantErr func(t *testing.T, err error)
		called  bool // whether the getter is called
	}{
		{name: "found", path: "/realms/r1/things/t1", want: &child{"r1", "t1"}, called: true},
		{name: "not found", path: "/realms/r1/things/t2", getErr: store.ErrNotFound, called: true,
			wantErr: func(t *testing.T, err error) {
				var e *apperr.Error
				if !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Code != apperr.CodeNotFound ||
					e.Message != "custom thing t2 not found" {
					t.Fatalf("error %#v, want 404 not_found %q", err, "custom thing t2 not found")
				}
			}},
		{name: "not found wrapped", path: "/realms/r1/things/t3", getErr: fmt.Errorf("child: %w", store.ErrNotFound), called: true,
			wantErr: func(t *testing.T, err error) {
				if e := apperr.From(err); e.Status != http.StatusNotFound || e.Message != "custom thing t3 not found" {
					t.Fatalf("error %#v, want 404 %q", err, "custom thing t3 not found")
				}
			}},
		{name: "other error passed through", path: "/realms/r1/things/t4", getErr: errDisk, called: true,
			wantErr: func(t *testing.T, err error) {
				if err != errDisk {
					t.Fatalf("error %#v, want the getter's own", err)
				}
			}},
		{name: "an API error passed through", path: "/realms/r1/things/t5", getErr: apperr.Forbidden("not yours"), called: true,
			wantErr: func(t *testing.T, err error) {
				if e := apperr.From(err); e.Status != http.StatusForbidden || e.Message != "not yours" {
					t.Fatalf("error %#v, want the getter's 403", err)
				}
			}},
		{name: "route without the variable", path: "/realms/r1/all-things",
			wantErr: func(t *testing.T, err error) {
				if e := apperr.From(err); e.Status != http.StatusInternalServerError || e.Code != apperr.CodeInternal {
					t.Fatalf("error %#v, want an internal error", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *child
			var err error
			called := false
			get := func(ctx context.Context, realmID, id string) (*child, error) {
				called = true
				if tc.getErr != nil {
					return nil, tc.getErr
				}
				return &child{realmID, id}, nil
			}
			load := func(w http.ResponseWriter, r *http.Request) {
				got, err = ChildOf(r, mux.Vars(r)["realm"], "thingId", "custom thing", get)
			}
			router := mux.NewRouter()
			router.HandleFunc("/realms/{realm}/things/{thingId}", load)
			router.HandleFunc("/realms/{realm}/all-things", load)
			router.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, tc.path, nil))

			if called != tc.called {
				t.Errorf("getter called: %v, want %v", called, tc.called)
			}
			if tc.wantErr != nil {
				tc.wantErr(t, err)
				if got != nil {
					t.Errorf("loaded %+v with an error", got)
				}
				return
			}
			if err != nil || got == nil || *got != *tc.want {
				t.Fatalf("loaded %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
