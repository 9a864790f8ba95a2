package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/store"
)

const testProviderKey = "pk-test-0123456789abcdef"

// providerTestServer stands in for a provider's API: it checks each
// request against the documented shape and answers with status and body.
type providerTestServer struct {
	t        *testing.T
	provider string
	url      string

	mu       sync.Mutex
	status   int    // what to answer; 0: the provider's success status
	answer   string // the body to answer with
	requests int
	bodies   []string // each accepted request's text part, for the links
	received chan struct{}
}

// check holds r to the provider's documented request for m.
func (p *providerTestServer) check(r *http.Request, m mail.Message) {
	t := p.t
	if r.Method != http.MethodPost {
		t.Errorf("%s: method %s", p.provider, r.Method)
	}
	body, _ := io.ReadAll(r.Body)
	var gotJSON any
	var wantJSON any
	switch p.provider {
	case "resend":
		mustHeader(t, r, "Authorization", "Bearer "+testProviderKey)
		mustPath(t, r, "/emails")
		wantJSON = map[string]any{"from": m.From, "to": []any{m.To}, "subject": m.Subject, "html": m.HTML, "text": m.Text}
	case "sendgrid":
		mustHeader(t, r, "Authorization", "Bearer "+testProviderKey)
		mustPath(t, r, "/v3/mail/send")
		wantJSON = map[string]any{
			"personalizations": []any{map[string]any{"to": []any{map[string]any{"email": m.To}}}},
			"from":             map[string]any{"email": "noreply@acme.test", "name": "Acme Corp"},
			"subject":          m.Subject,
			"content": []any{map[string]any{"type": "text/plain", "value": m.Text},
				map[string]any{"type": "text/html", "value": m.HTML}},
		}
	case "mailgun":
		user, pass, ok := r.BasicAuth()
		if !ok || user != "api" || pass != testProviderKey {
			t.Errorf("mailgun: basic auth %q %q %v", user, pass, ok)
		}
		mustPath(t, r, "/v3/mg.acme.test/messages")
		mustHeader(t, r, "Content-Type", "application/x-www-form-urlencoded")
		form, err := url.ParseQuery(string(body))
		if err != nil {
			t.Errorf("mailgun: form %v", err)
		}
		want := url.Values{"from": {m.From}, "to": {m.To}, "subject": {m.Subject}, "html": {m.HTML}, "text": {m.Text}}
		if !reflect.DeepEqual(form, want) {
			t.Errorf("mailgun form\n%v\nwant\n%v", form, want)
		}
	case "postmark":
		mustHeader(t, r, "X-Postmark-Server-Token", testProviderKey)
		mustHeader(t, r, "Accept", "application/json")
		mustPath(t, r, "/email")
		wantJSON = map[string]any{"From": m.From, "To": m.To, "Subject": m.Subject, "HtmlBody": m.HTML,
			"TextBody": m.Text, "MessageStream": "outbound"}
	}
	if wantJSON != nil {
		mustHeader(t, r, "Content-Type", "application/json")
		if err := json.Unmarshal(body, &gotJSON); err != nil {
			t.Errorf("%s: body %s: %v", p.provider, body, err)
		}
		if !reflect.DeepEqual(gotJSON, wantJSON) {
			t.Errorf("%s body\n%#v\nwant\n%#v", p.provider, gotJSON, wantJSON)
		}
	}
}

func mustHeader(t *testing.T, r *http.Request, name, want string) {
	t.Helper()
	if got := r.Header.Get(name); got != want {
		t.Errorf("header %s %q, want %q", name, got, want)
	}
}

func mustPath(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if r.URL.Path != want {
		t.Errorf("path %s, want %s", r.URL.Path, want)
	}
}

// startProviderTestServer serves the provider's API; expect returns the
// message the next requests should carry.
func startProviderTestServer(t *testing.T, provider string, expect func() mail.Message) *providerTestServer {
	p := &providerTestServer{t: t, provider: provider, received: make(chan struct{}, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		status, answer := p.status, p.answer
		p.requests++
		p.mu.Unlock()
		if expect != nil {
			p.check(r, expect())
		} else {
			p.checkAny(r)
		}
		if status == 0 {
			status = map[string]int{"resend": 200, "sendgrid": 202, "mailgun": 200, "postmark": 200}[provider]
			answer = `{"id":"msg-1"}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
		p.received <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// checkAny records the text part of a message whose content the test
// does not know in advance (a link with a fresh token).
func (p *providerTestServer) checkAny(r *http.Request) {
	var m map[string]any
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &m); err != nil {
		p.t.Errorf("%s: body %s: %v", p.provider, body, err)
		return
	}
	text, _ := m["text"].(string)
	p.mu.Lock()
	p.bodies = append(p.bodies, text)
	p.mu.Unlock()
}

func (p *providerTestServer) answerWith(status int, body string) {
	p.mu.Lock()
	p.status, p.answer = status, body
	p.mu.Unlock()
}

func (p *providerTestServer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// setRealmEmail points realm at a provider.
func (s *testServer) setRealmEmail(realm string, change func(r *store.Realm)) {
	s.t.Helper()
	r, err := s.store.GetRealm(context.Background(), realm)
	if err != nil {
		s.t.Fatal(err)
	}
	r.DisplayName, r.SMTPFrom = "Acme Corp", "noreply@acme.test"
	change(r)
	if err := s.store.UpdateRealm(context.Background(), r); err != nil {
		s.t.Fatal(err)
	}
}

func providerConfig(provider, baseURL string) map[string]any {
	cfg := map[string]any{"apiKey": testProviderKey, "baseUrl": baseURL}
	if provider == "mailgun" {
		cfg["domain"] = "mg.acme.test"
	}
	return cfg
}

// Each provider gets the documented request through POST .../email/test,
// and its refusal comes back as a 502 naming its status and message but
// never the API key, even when the provider echoes it.
func TestEmailTestProviders(t *testing.T) {
	for _, provider := range []string{"resend", "sendgrid", "mailgun", "postmark"} {
		t.Run(provider, func(t *testing.T) {
			s := newTestServer(t, allowLoopback)
			s.createRealm("acme")
			want, err := deliveryTestMail(testCatalogues.Localizer("en"), &store.Realm{Name: "acme", DisplayName: "Acme Corp"}, provider, "bob@example.test")
			if err != nil || want.Subject != "Test email from Acme Corp" ||
				!strings.HasPrefix(want.Text, "This is a test email from Acme Corp, sent through "+provider+".\n\nDelivery works.\n") {
				t.Fatalf("test mail %+v: %v", want, err)
			}
			want.From = `"Acme Corp" <noreply@acme.test>`
			p := startProviderTestServer(t, provider, func() mail.Message { return want })
			s.setRealmEmail("acme", func(r *store.Realm) {
				r.EmailProvider, r.EmailProviderConfig = provider, providerConfig(provider, p.url)
			})
			res := s.admin(http.MethodPost, "/admin/realms/acme/email/test", map[string]any{"to": "Bob@Example.test"})
			mustStatus(t, res, http.StatusOK)
			if body := res.object(t); body["success"] != true || !strings.Contains(body["message"].(string), provider) {
				t.Fatalf("body %s", res.Body)
			}
			if p.count() != 1 {
				t.Fatalf("%d requests", p.count())
			}

			p.answerWith(http.StatusUnauthorized, `{"message":"The API key `+testProviderKey+` is not valid"}`)
			res = s.admin(http.MethodPost, "/admin/realms/acme/email/test", map[string]any{"to": "bob@example.test"})
			mustError(t, res, http.StatusBadGateway, "delivery_failed", "")
			body := string(res.Body)
			if !strings.Contains(body, "401") || !strings.Contains(body, "is not valid") || strings.Contains(body, testProviderKey) {
				t.Fatalf("502 body %s", body)
			}
		})
	}
}
