package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/html"
)

// loadBrowser is one person's browser in a scenario that signs in through
// the hosted pages: it keeps the cookies it is given, as a browser does,
// and follows redirects within the server under test, over the scenario's
// connections.
type loadBrowser struct {
	conns *loadConns
	jar   http.CookieJar
}

func newLoadBrowser(conns *loadConns) *loadBrowser {
	jar, _ := cookiejar.New(nil) // fails only on options, and there are none
	return &loadBrowser{conns: conns, jar: jar}
}

// maxRedirects bounds a chain of redirects, as browsers do (Chromium's is
// 20): a chain that long is a loop.
const maxRedirects = 20

// loadPage is an answer as the browser saw it.
type loadPage struct {
	url    *url.URL
	status int
	header http.Header
	body   []byte
}

var errLeftServer = errors.New("the browser was sent away from the server under test")

// send sends req with the browser's cookies for its URL, and keeps the
// cookies the answer sets.
func (b *loadBrowser) send(req *http.Request) (*loadPage, error) {
	for _, c := range b.jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	req.Header.Set("Accept", "text/html")
	resp, body, err := b.conns.roundTrip(req)
	if err != nil {
		return nil, err
	}
	b.jar.SetCookies(req.URL, resp.Cookies())
	return &loadPage{url: req.URL, status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// open loads u and follows its redirects, as follow does.
func (b *loadBrowser) open(ctx context.Context, u string, stop func(*url.URL) bool) (*loadPage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	p, err := b.send(req)
	if err != nil {
		return nil, err
	}
	return b.follow(ctx, p, stop)
}

// follow follows p's redirects with GETs, as a browser does after a 302
// or 303, and answers the first page that is no redirect. A redirect to a
// place stop accepts (an application's redirect URI, which nothing here
// serves) is answered itself, not followed.
func (b *loadBrowser) follow(ctx context.Context, p *loadPage, stop func(*url.URL) bool) (*loadPage, error) {
	for range maxRedirects {
		if p.status < 300 || p.status > 399 {
			return p, nil
		}
		next, err := p.url.Parse(p.header.Get("Location"))
		if err != nil {
			return nil, fmt.Errorf("redirect from %s: %w", p.url.Path, err)
		}
		if stop != nil && stop(next) {
			return p, nil
		}
		if next.Host != p.url.Host {
			return nil, fmt.Errorf("%w: %s", errLeftServer, next)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next.String(), nil)
		if err != nil {
			return nil, err
		}
		if p, err = b.send(req); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("more than %d redirects, the last to %s", maxRedirects, p.url)
}

// submit posts form f of page p and follows the redirects.
func (b *loadBrowser) submit(ctx context.Context, p *loadPage, f *loadForm, stop func(*url.URL) bool) (*loadPage, error) {
	action, err := p.url.Parse(f.action)
	if err != nil {
		return nil, fmt.Errorf("form action %q: %w", f.action, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(f.values.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	next, err := b.send(req)
	if err != nil {
		return nil, err
	}
	return b.follow(ctx, next, stop)
}

// signIn fills the sign-in form of page p with a username and password
// and posts it, as a person does on the hosted sign-in page.
func (b *loadBrowser) signIn(ctx context.Context, p *loadPage, username, password string, stop func(*url.URL) bool) (*loadPage, error) {
	f := p.form(func(f *loadForm) bool { return f.has(fieldPassword) })
	if f == nil {
		return nil, fmt.Errorf("no sign-in form at %s: %d %.300s", p.url.Path, p.status, p.body)
	}
	f.values.Set(fieldUsername, username)
	f.values.Set(fieldPassword, password)
	return b.submit(ctx, p, f, stop)
}

// cookieHeader is the Cookie header the browser sends to u.
func (b *loadBrowser) cookieHeader(u *url.URL) string {
	var parts []string
	for _, c := range b.jar.Cookies(u) {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}

// The fields of the hosted sign-in form.
const (
	fieldUsername = "username"
	fieldPassword = "password"
)

// loadForm is a POST form of a page and the values it would send.
type loadForm struct {
	action string
	names  []string
	values url.Values
}

func (f *loadForm) has(name string) bool { return slices.Contains(f.names, name) }

// form is the first POST form of p that match accepts, or nil.
func (p *loadPage) form(match func(*loadForm) bool) *loadForm {
	doc, err := html.Parse(bytes.NewReader(p.body))
	if err != nil {
		return nil
	}
	var forms []*loadForm
	var walk func(n *html.Node, in *loadForm)
	walk = func(n *html.Node, in *loadForm) {
		if n.Type == html.ElementNode {
			switch {
			case n.Data == "form" && strings.EqualFold(htmlAttr(n, "method"), http.MethodPost):
				in = &loadForm{action: htmlAttr(n, "action"), values: url.Values{}}
				forms = append(forms, in)
			case (n.Data == "input" || n.Data == "button") && in != nil && htmlAttr(n, "name") != "":
				name, typ := htmlAttr(n, "name"), htmlAttr(n, "type")
				in.names = append(in.names, name)
				if n.Data == "input" && (typ != "checkbox" && typ != "radio" || htmlHas(n, "checked")) {
					in.values.Set(name, htmlAttr(n, "value"))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, nil)
	for _, f := range forms {
		if match(f) {
			return f
		}
	}
	return nil
}

func htmlAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func htmlHas(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// eachWorker runs set(w) for the n workers of a scenario, a few at a
// time: a sign-in is a password hash, and the server hashes on its cores
// only, refusing what waits too long.
func eachWorker(n int, set func(w int) error) error {
	const atOnce = 4
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	slots := make(chan struct{}, atOnce)
	for w := range n {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := set(w); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("worker %d: %w", w, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
