package ldapfed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/app/apptest"
)

func TestEachEntry(t *testing.T) {
	var ldif strings.Builder
	for i := range 5 {
		ldif.WriteString(apptest.Person(fmt.Sprintf("p%d", i), "P", "Q", "", "pw"))
	}
	d := apptest.StartDirectory(t, ldif.String())
	c, err := ldap.DialURL(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Bind(d.AdminDN, d.AdminPassword); err != nil {
		t.Fatal(err)
	}
	uids := func(ctx context.Context, stopAt int, fail error) ([]string, error) {
		req := ldap.NewSearchRequest(d.PeopleDN, ldap.ScopeSingleLevel, ldap.NeverDerefAliases, 0, 0, false,
			"(objectClass=inetOrgPerson)", []string{"uid"}, nil)
		var got []string
		err := eachEntry(ctx, c, req, fixed(2), func(e *ldap.Entry) error {
			got = append(got, e.GetAttributeValue("uid"))
			switch {
			case len(got) == stopAt && fail != nil:
				return fail
			case len(got) == stopAt:
				return errStop
			}
			return nil
		})
		return got, err
	}
	ctx := context.Background()
	if got, err := uids(ctx, 0, nil); err != nil || strings.Join(got, ",") != "p0,p1,p2,p3,p4" {
		t.Fatalf("every entry, in pages of 2: %v, %v", got, err)
	}
	// Stopped in the middle of a page, and again at its end: the
	// connection serves the next search.
	for _, stopAt := range []int{3, 4} {
		if got, err := uids(ctx, stopAt, nil); err != nil || len(got) != stopAt {
			t.Fatalf("stopped at %d: %v, %v", stopAt, got, err)
		}
	}
	boom := errors.New("boom")
	if got, err := uids(ctx, 1, boom); !errors.Is(err, boom) || len(got) != 1 {
		t.Fatalf("a failure of fn: %v, %v", got, err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if got, err := uids(gone, 0, nil); !errors.Is(err, context.Canceled) || len(got) != 0 {
		t.Fatalf("a cancelled search: %v, %v", got, err)
	}
	if got, err := uids(ctx, 0, nil); err != nil || len(got) != 5 {
		t.Fatalf("after the others: %v, %v", got, err)
	}
}
