package app

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// benchRedirect is where the browser benchmarks' client is sent back to.
const benchRedirect = "http://127.0.0.1:1/callback"

var (
	benchAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)
	benchField  = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)
)

// browserSignIn runs one browser through the code flow: the
// authorization request, the sign-in form, the redirect back with the
// code, and the code's redemption.
func (c *codeflowBench) browserSignIn() error {
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: c.client.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	q := url.Values{"client_id": {"web"}, "redirect_uri": {benchRedirect}, "response_type": {"code"}, "scope": {"openid"},
		"state": {"s"}}
	resp, err := b.Get(c.base + "/realms/bench/protocol/openid-connect/auth?" + q.Encode())
	if err != nil {
		return err
	}
	resp.Body.Close()
	page := resp.Header.Get("Location")
	if !strings.HasPrefix(page, "http") {
		page = c.base + page
	}
	if resp, err = b.Get(page); err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sign-in page: status %d, %v", resp.StatusCode, err)
	}
	action := benchAction.FindSubmatch(body)
	if action == nil {
		return fmt.Errorf("no form on the sign-in page")
	}
	form := url.Values{"username": {"alice"}, "password": {codeflowPassword}}
	for _, m := range benchField.FindAllSubmatch(body, -1) {
		form.Set(string(m[1]), html.UnescapeString(string(m[2])))
	}
	to, _ := url.Parse(page)
	target, _ := to.Parse(html.UnescapeString(string(action[1])))
	if resp, err = b.PostForm(target.String(), form); err != nil {
		return err
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Query().Get("code") == "" {
		return fmt.Errorf("after the sign-in: status %d to %q, want the redirect back with a code", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, err = c.grantAs(url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
		"redirect_uri": {benchRedirect}}, "web", c.webSecret)
	return err
}

func newBrowserBench(b *testing.B, bindFlow bool) *codeflowBench {
	c := newCodeflowBench(b)
	r := c.server.admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{"clientId": "web",
		"redirectUris": []string{benchRedirect}, "grantTypes": []string{"authorization_code"}})
	mustStatus(b, r, http.StatusCreated)
	c.webSecret = r.object(b)["secret"].(string)
	if bindFlow {
		r = c.server.admin(http.MethodPost, "/admin/realms/bench/auth-flows", map[string]any{"alias": "password",
			"usage": "browser", "steps": []any{map[string]any{"kind": "username-password", "requirement": "required"}}})
		mustStatus(b, r, http.StatusCreated)
		mustStatus(b, c.server.admin(http.MethodPut, "/admin/realms/bench/auth-flows/"+r.object(b)["id"].(string)+
			"/assign-client/web", nil), http.StatusNoContent)
	}
	if err := c.browserSignIn(); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkBrowserCodeFlow measures whole sign-ins of a browser through
// the code flow on loopback, on the sign-in without a flow: four requests
// and the code's redemption, the argon2id check dominating.
func BenchmarkBrowserCodeFlow(b *testing.B) {
	c := newBrowserBench(b, false)
	codeflowBenchRun(b, func(pb *testing.PB) error {
		for pb.Next() {
			if err := c.browserSignIn(); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkBrowserCodeFlowBound is BenchmarkBrowserCodeFlow for a client
// bound to a flow of one password step (app/signin).
func BenchmarkBrowserCodeFlowBound(b *testing.B) {
	c := newBrowserBench(b, true)
	codeflowBenchRun(b, func(pb *testing.PB) error {
		for pb.Next() {
			if err := c.browserSignIn(); err != nil {
				return err
			}
		}
		return nil
	})
}
