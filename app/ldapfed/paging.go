package ldapfed

import (
	"context"
	"errors"

	"github.com/go-ldap/ldap/v3"
)

// errStop ends eachEntry early without an error.
var errStop = errors.New("stop")

// eachEntry runs a paged search (RFC 2696) and gives fn each entry as its
// page arrives: a sync holds one page of entries at a time, whatever the
// size of the directory. fn returning errStop ends the search (the
// directory is told to drop its paging state); any other error ends it
// with that error.
func eachEntry(ctx context.Context, c *ldap.Conn, req *ldap.SearchRequest, size int, fn func(*ldap.Entry) error) error {
	paging := ldap.NewControlPaging(uint32(size))
	req.Controls = append(req.Controls, paging)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := c.Search(req)
		if err != nil {
			return err
		}
		var cookie []byte
		if ctrl, ok := ldap.FindControl(res.Controls, ldap.ControlTypePaging).(*ldap.ControlPaging); ok {
			cookie = ctrl.Cookie
		}
		for _, e := range res.Entries {
			if err := fn(e); errors.Is(err, errStop) {
				if len(cookie) > 0 {
					paging.SetCookie(cookie)
					paging.PagingSize = 0
					_, _ = c.Search(req)
				}
				return nil
			} else if err != nil {
				return err
			}
		}
		if len(cookie) == 0 {
			return nil
		}
		paging.SetCookie(cookie)
	}
}
