package scim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

// benchUsers is how many users the list benchmark's realm holds.
const benchUsers = 100_000

// BenchmarkListUsers answers SCIM list requests in a realm of 100,000
// users, each provisioned with a work email, a display name and a work
// address: an exact userName (Entra ID and Okta look users up so), the
// substring operators (co, sw, ew) on each of the attributes clients
// search by, a folded family name, the users of one city, and a page of
// the whole realm. Each request goes through the router, the token check
// (with its use recorded) and the SQL of the filter; p50-ms and p99-ms are
// the latencies of the requests measured.
func BenchmarkListUsers(b *testing.B) {
	p := newProvisioner(b)
	realm := p.Realm("acme")
	ctx := context.Background()
	seeding := time.Now()
	err := p.Store.Tx(ctx, func(tx *store.Store) error {
		for i := range benchUsers {
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			email := fmt.Sprintf("user%06d@example.com", i)
			u := &store.User{ID: id, RealmID: realm.ID, Username: fmt.Sprintf("user%06d", i), Email: email,
				FirstName: "Bench", LastName: fmt.Sprintf("Person %d", i), Enabled: true, CreatedAt: 1_795_000_000_000}
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
			display := fmt.Sprintf("Bench User %06d", i)
			data := fmt.Sprintf(`{"externalId":"ext-%d","displayName":%q,"emails":[{"value":%q,"type":"work","primary":true}]}`,
				i, display, email)
			addresses := []store.SCIMAddress{{Type: "work", Locality: fmt.Sprintf("city%d", i%1000), Country: "fr"}}
			err := tx.PutSCIMUser(ctx, realm.ID, id, store.SCIMUser{ModifiedAt: 1_795_000_000_000, Data: data, Addresses: addresses}, []store.SCIMValue{
				{Attr: "externalid", Value: fmt.Sprintf("ext-%d", i), Fold: fmt.Sprintf("ext-%d", i)},
				{Attr: "displayname", Value: display, Fold: store.FoldCase(display)},
				{Attr: "emails", Value: email, Fold: email, Type: "work", Primary: true}})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seed %d users: %v", benchUsers, err)
	}
	// The trigram indexes take the users in behind the writes; the
	// searches measured are those of a realm they hold.
	indexing := time.Now()
	if err := p.Store.IndexTexts(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d users in %v, indexed their texts in %v", benchUsers, indexing.Sub(seeding).Round(time.Millisecond),
		time.Since(indexing).Round(time.Millisecond))
	for _, bc := range []struct {
		name, query string
		total       float64
	}{
		{"userName eq", "filter=" + url.QueryEscape(`userName eq "user054321"`), 1},
		{"externalId eq", "filter=" + url.QueryEscape(`externalId eq "ext-54321"`), 1},
		// The substring operators: sw finds the 10 or 11 users whose
		// number goes on after the prefix.
		{"userName co", "filter=" + url.QueryEscape(`userName co "r054321"`), 1},
		{"userName sw", "filter=" + url.QueryEscape(`userName sw "USER05432"`), 10},
		{"userName ew", "filter=" + url.QueryEscape(`userName ew "054321"`), 1},
		{"emails co", "filter=" + url.QueryEscape(`emails co "r054321@"`), 1},
		{"emails sw", "filter=" + url.QueryEscape(`emails.value sw "user054321@"`), 1},
		{"emails ew", "filter=" + url.QueryEscape(`emails.value ew "054321@Example.com"`), 1},
		{"displayName co", "filter=" + url.QueryEscape(`displayName co "User 054321"`), 1},
		{"displayName sw", "filter=" + url.QueryEscape(`displayName sw "bench user 05432"`), 10},
		{"displayName ew", "filter=" + url.QueryEscape(`displayName ew "SER 054321"`), 1},
		{"name.familyName co", "filter=" + url.QueryEscape(`name.familyName co "son 54321"`), 1},
		{"name.familyName sw", "filter=" + url.QueryEscape(`name.familyName sw "PERSON 5432"`), 11},
		{"name.familyName ew", "filter=" + url.QueryEscape(`name.familyName ew "on 54321"`), 1},
		{"externalId co", "filter=" + url.QueryEscape(`externalId co "t-54321"`), 1},
		{"externalId sw", "filter=" + url.QueryEscape(`externalId sw "ext-5432"`), 11},
		{"externalId ew", "filter=" + url.QueryEscape(`externalId ew "-54321"`), 1},
		// A text every user's email holds: more rows than the trigram
		// index pays for, so the realm is scanned.
		{"emails co, every user", "count=100&filter=" + url.QueryEscape(`emails co "@example.com"`), benchUsers},
		{"name.familyName eq", "filter=" + url.QueryEscape(`name.familyName eq "PERSON 54321"`), 1},
		{"addresses[]", "count=100&filter=" + url.QueryEscape(`addresses[type eq "work" and locality eq "City321"]`), 100},
		{"page of 100", "startIndex=50001&count=100", benchUsers},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := func() *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodGet, "/scim/v2/acme/Users?"+bc.query, nil)
				r.RemoteAddr = apptest.ClientAddr
				r.Header.Set("Authorization", "Bearer "+p.cred)
				rec := httptest.NewRecorder()
				p.Handler.ServeHTTP(rec, r)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", bc.query, rec.Code, rec.Body)
				}
				return rec
			}
			var first struct{ TotalResults float64 }
			if err := json.Unmarshal(req().Body.Bytes(), &first); err != nil || first.TotalResults != bc.total {
				b.Fatalf("%s: %v results (%v), want %v", bc.query, first.TotalResults, err, bc.total)
			}
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				req()
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
