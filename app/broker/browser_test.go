package broker_test

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

// browser is a browser: cookies kept, redirects shown to the test, which
// follows them while they stay on the servers it knows.
type browser struct {
	t      *testing.T
	client *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is one answer the browser got.
type page struct {
	status int
	header http.Header
	body   []byte
	url    *url.URL
}

func (p *page) location(t *testing.T) *url.URL {
	t.Helper()
	loc, err := p.url.Parse(p.header.Get("Location"))
	if err != nil || p.header.Get("Location") == "" {
		t.Fatalf("status %d from %s without a usable Location; body %s", p.status, p.url, p.body)
	}
	return loc
}

func (b *browser) do(req *http.Request) *page {
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
	return &page{status: res.StatusCode, header: res.Header, body: body, url: req.URL}
}

func (b *browser) get(u string) *page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) post(u string, form url.Values) *page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// follow follows p's redirects while they point at one of servers (base
// URLs), and returns the answer it stops at: a page, or a redirect
// elsewhere.
func (b *browser) follow(p *page, servers ...string) *page {
	b.t.Helper()
	for hops := 0; p.status/100 == 3; hops++ {
		if hops > 20 {
			b.t.Fatalf("redirect loop at %s", p.url)
		}
		next := p.location(b.t).String()
		on := false
		for _, s := range servers {
			on = on || strings.HasPrefix(next, s+"/")
		}
		if !on {
			break
		}
		p = b.get(next)
	}
	return p
}

// form is a page's form as a browser would submit it.
type form struct {
	action string
	fields url.Values
}

// forms parses the page's forms, with their inputs' values.
func (p *page) forms(t *testing.T) []*form {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(p.body))
	if err != nil {
		t.Fatal(err)
	}
	var forms []*form
	var walk func(n *html.Node, f *form)
	walk = func(n *html.Node, f *form) {
		if n.Type == html.ElementNode {
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[a.Key] = a.Val
			}
			switch n.Data {
			case "form":
				action, err := p.url.Parse(attr["action"])
				if err != nil {
					t.Fatal(err)
				}
				f = &form{action: action.String(), fields: url.Values{}}
				forms = append(forms, f)
			case "input":
				if f != nil && attr["name"] != "" && attr["type"] != "checkbox" {
					f.fields.Set(attr["name"], attr["value"])
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

// links are the page's links' targets.
func (p *page) links(t *testing.T) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(p.body))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			for _, a := range n.Attr {
				if a.Key == "href" {
					out = append(out, a.Val)
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

// submit fills a form's fields and posts it.
func (b *browser) submit(f *form, values map[string]string) *page {
	b.t.Helper()
	for k, v := range values {
		f.fields.Set(k, v)
	}
	return b.post(f.action, f.fields)
}

// mustFormsLeave checks that p's policy has no form-action, as a page whose
// forms lead off the server (to the provider, or on to the application)
// needs, and keeps the rest of the pages' policy.
func mustFormsLeave(t *testing.T, p *page) {
	t.Helper()
	csp := p.header.Get("Content-Security-Policy")
	if strings.Contains(csp, "form-action") || !strings.Contains(csp, "default-src 'none'") ||
		!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "base-uri 'none'") {
		t.Fatalf("page %s: CSP %q, want the pages' policy without form-action", p.url, csp)
	}
}
