package apptest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// Browser is an HTTP client that keeps cookies, as a browser does, and
// shows redirects to the test, which follows them (Follow) while they stay
// on the servers it knows.
type Browser struct {
	t      testing.TB
	client *http.Client
}

// NewBrowser is a browser with an empty cookie jar.
func NewBrowser(t testing.TB) *Browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{t: t, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Page is one answer the browser got.
type Page struct {
	Status int
	Header http.Header
	Body   []byte
	URL    *url.URL // where it was asked for
}

// Location is where a redirect points, resolved against the page's URL.
func (p *Page) Location(t testing.TB) *url.URL {
	t.Helper()
	loc, err := p.URL.Parse(p.Header.Get("Location"))
	if err != nil || p.Header.Get("Location") == "" {
		t.Fatalf("status %d from %s without a usable Location; body %s", p.Status, p.URL, p.Body)
	}
	return loc
}

func (b *Browser) do(req *http.Request) *Page {
	b.t.Helper()
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &Page{Status: res.StatusCode, Header: res.Header, Body: body, URL: req.URL}
}

// Send sends req with the browser's cookies, as a page's script does, and
// keeps the cookies the answer sets.
func (b *Browser) Send(req *http.Request) *Page {
	b.t.Helper()
	return b.do(req)
}

// Get asks for a page.
func (b *Browser) Get(u string) *Page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// Post posts a form.
func (b *Browser) Post(u string, form url.Values) *Page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// Follow follows p's redirects while they point at one of servers (base
// URLs), and returns the answer it stops at: a page, or a redirect
// elsewhere.
func (b *Browser) Follow(p *Page, servers ...string) *Page {
	b.t.Helper()
	for hops := 0; p.Status/100 == 3; hops++ {
		if hops > 20 {
			b.t.Fatalf("redirect loop at %s", p.URL)
		}
		next := p.Location(b.t).String()
		on := false
		for _, s := range servers {
			on = on || strings.HasPrefix(next, s+"/")
		}
		if !on {
			break
		}
		p = b.Get(next)
	}
	return p
}

// Form is a page's form as a browser would submit it.
type Form struct {
	Action string
	Fields url.Values
}

// Forms parses the page's forms, with their inputs' values.
func (p *Page) Forms(t testing.TB) []*Form {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(p.Body))
	if err != nil {
		t.Fatal(err)
	}
	var forms []*Form
	var walk func(n *html.Node, f *Form)
	walk = func(n *html.Node, f *Form) {
		if n.Type == html.ElementNode {
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[a.Key] = a.Val
			}
			switch n.Data {
			case "form":
				action, err := p.URL.Parse(attr["action"])
				if err != nil {
					t.Fatal(err)
				}
				f = &Form{Action: action.String(), Fields: url.Values{}}
				forms = append(forms, f)
			case "input":
				if f != nil && attr["name"] != "" && attr["type"] != "checkbox" {
					f.Fields.Set(attr["name"], attr["value"])
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, f)
		}
	}
	walk(doc, nil)
	return forms
}

// Links are the targets of the page's links, resolved against its URL.
func (p *Page) Links(t testing.TB) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(p.Body))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			for _, a := range n.Attr {
				if a.Key != "href" {
					continue
				}
				if u, err := p.URL.Parse(a.Val); err == nil {
					out = append(out, u.String())
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// Submit fills a form's fields and posts it.
func (b *Browser) Submit(f *Form, values map[string]string) *Page {
	b.t.Helper()
	for k, v := range values {
		f.Fields.Set(k, v)
	}
	return b.Post(f.Action, f.Fields)
}
