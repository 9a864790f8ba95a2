package ldapfed

import (
	"context"
	"errors"

	"github.com/go-ldap/ldap/v3"
)

// errStop ends eachEntry early without an error.
var errStop = errors.New("stop")

// eachEntry runs a paged search (RFC 2696) and gives fn each entry as it
// is decoded, so that the search holds no page whole: the library keeps
// every value of an entry in a buffer of at least 512 bytes, and a page of
// groups with a thousand members each, read whole, held a kilobyte for
// each DN of 45 bytes. size says how many entries a page asks for; it is
// asked before each page. fn returning errStop ends the search (the
// directory is told to drop its paging state); any other error ends it
// with that error.
func eachEntry(ctx context.Context, c *ldap.Conn, req *ldap.SearchRequest, size func() int, fn func(*ldap.Entry) error) error {
	paging := ldap.NewControlPaging(uint32(size()))
	req.Controls = append(req.Controls, paging)
	for {
		paging.PagingSize = uint32(size())
		cookie, stopped, err := searchPage(ctx, c, req, fn)
		if err != nil {
			return err
		}
		if len(cookie) == 0 {
			return nil
		}
		paging.SetCookie(cookie)
		if stopped {
			paging.PagingSize = 0
			_, _ = c.Search(req)
			return nil
		}
	}
}

// fixed is a page size that does not change.
func fixed(n int) func() int { return func() int { return n } }

// searchPage runs one page of a paged search, giving fn its entries as
// they arrive, and answers the cookie of the next page ("" for the last).
// After errStop it reads the page to its end, without fn, for the cookie
// that lets the directory drop its state.
func searchPage(ctx context.Context, c *ldap.Conn, req *ldap.SearchRequest, fn func(*ldap.Entry) error) (cookie []byte, stopped bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	pageCtx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the library's reader of this page when fn fails
	res := c.SearchAsync(pageCtx, req, 0)
	for res.Next() {
		if e := res.Entry(); e != nil {
			if stopped {
				continue
			}
			if err := fn(e); errors.Is(err, errStop) {
				stopped = true
			} else if err != nil {
				return nil, false, err
			}
			continue
		}
		if ctrl, ok := ldap.FindControl(res.Controls(), ldap.ControlTypePaging).(*ldap.ControlPaging); ok {
			cookie = ctrl.Cookie
		}
	}
	if err := res.Err(); err != nil {
		return nil, false, err
	}
	// The library ends a cancelled search as if it had run through.
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	return cookie, stopped, nil
}
