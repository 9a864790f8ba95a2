package mail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
)

// The HTTP email providers, each over its documented send API. The base
// URL can be replaced by emailProviderConfig.baseUrl: for tests, and for
// self-hosted relays that speak one of these APIs.
var providerBaseURLs = map[string]string{
	"resend":   "https://api.resend.com",
	"sendgrid": "https://api.sendgrid.com",
	"mailgun":  "https://api.mailgun.net",
	"postmark": "https://api.postmarkapp.com",
}

const (
	mailgunEUBaseURL  = "https://api.eu.mailgun.net"
	providerTimeout   = 30 * time.Second
	providerErrorSize = 512 // bytes of a provider's error body kept in the error
)

// httpMailer sends through one provider's HTTP API.
type httpMailer struct {
	provider string
	apiKey   string
	baseURL  string
	domain   string // mailgun's sending domain
	client   *http.Client
}

// NewClient is the client of the HTTP providers: the outbound guard's
// (no non-public address unless allowed), with no redirect followed, since
// a redirect would carry the API key (in Postmark's own header, which Go
// does not strip) to wherever it points.
func NewClient(allowed []netip.Prefix) *http.Client {
	c := httpx.OutboundClient(providerTimeout, allowed)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// httpMailerFor reads and checks the provider's settings: apiKey always,
// and domain for Mailgun (region "eu" picks its EU endpoint).
func httpMailerFor(provider string, cfg map[string]any, client *http.Client) (*httpMailer, error) {
	str := func(key string) (string, error) {
		v, ok := cfg[key]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", configErrorf("emailProviderConfig.%s must be a string", key)
		}
		return strings.TrimSpace(s), nil
	}
	m := &httpMailer{provider: provider, baseURL: providerBaseURLs[provider], client: client}
	var err error
	if m.apiKey, err = str("apiKey"); err != nil {
		return nil, err
	} else if m.apiKey == "" {
		return nil, configErrorf("emailProviderConfig.apiKey is required for %s", provider)
	}
	if provider == "mailgun" {
		if m.domain, err = str("domain"); err != nil {
			return nil, err
		} else if m.domain == "" || strings.ContainsAny(m.domain, "/?#% ") {
			return nil, configErrorf("emailProviderConfig.domain (the sending domain) is required for mailgun")
		}
		region, err := str("region")
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(region) {
		case "", "us":
		case "eu":
			m.baseURL = mailgunEUBaseURL
		default:
			return nil, configErrorf("emailProviderConfig.region must be us or eu")
		}
	}
	base, err := str("baseUrl")
	if err != nil {
		return nil, err
	}
	if base != "" {
		if !validate.IsHTTPURL(base) {
			return nil, configErrorf("emailProviderConfig.baseUrl must be an http or https URL")
		}
		m.baseURL = strings.TrimRight(base, "/")
	}
	return m, nil
}

func (m *httpMailer) send(ctx context.Context, msg Message) error {
	req, err := m.request(ctx, msg)
	if err != nil {
		return err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", m.provider, m.redactErr(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, providerErrorSize+1))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return fmt.Errorf("%s answered %s: %s", m.provider, resp.Status, m.redact(truncateUTF8(body, providerErrorSize)))
}

// request builds the provider's send request, authenticated as it documents.
func (m *httpMailer) request(ctx context.Context, msg Message) (*http.Request, error) {
	var path, contentType string
	var body []byte
	var err error
	switch m.provider {
	case "resend":
		path, contentType = "/emails", "application/json"
		body, err = json.Marshal(map[string]any{"from": msg.From, "to": []string{msg.To}, "subject": msg.Subject,
			"html": msg.HTML, "text": msg.Text})
	case "sendgrid":
		from, perr := mail.ParseAddress(msg.From)
		if perr != nil {
			return nil, fmt.Errorf("sender %q is not an email address", msg.From)
		}
		sender := map[string]string{"email": from.Address}
		if from.Name != "" {
			sender["name"] = from.Name
		}
		path, contentType = "/v3/mail/send", "application/json"
		// SendGrid wants text/plain before text/html.
		body, err = json.Marshal(map[string]any{
			"personalizations": []any{map[string]any{"to": []any{map[string]string{"email": msg.To}}}},
			"from":             sender, "subject": msg.Subject,
			"content": []any{map[string]string{"type": "text/plain", "value": msg.Text},
				map[string]string{"type": "text/html", "value": msg.HTML}},
		})
	case "mailgun":
		path, contentType = "/v3/"+url.PathEscape(m.domain)+"/messages", "application/x-www-form-urlencoded"
		body = []byte(url.Values{"from": {msg.From}, "to": {msg.To}, "subject": {msg.Subject},
			"html": {msg.HTML}, "text": {msg.Text}}.Encode())
	case "postmark":
		path, contentType = "/email", "application/json"
		body, err = json.Marshal(map[string]any{"From": msg.From, "To": msg.To, "Subject": msg.Subject,
			"HtmlBody": msg.HTML, "TextBody": msg.Text, "MessageStream": "outbound"})
	default:
		return nil, fmt.Errorf("unknown email provider %q", m.provider)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", m.provider, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.provider, m.redactErr(err))
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	switch m.provider {
	case "resend", "sendgrid":
		req.Header.Set("Authorization", "Bearer "+m.apiKey)
	case "mailgun":
		req.SetBasicAuth("api", m.apiKey)
	case "postmark":
		req.Header.Set("X-Postmark-Server-Token", m.apiKey)
	}
	return req, nil
}

// redact removes the API key from text bound for logs and admins, should a
// provider (or a proxy) ever echo it.
func (m *httpMailer) redact(s string) string {
	if m.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, m.apiKey, "[redacted]")
}

func (m *httpMailer) redactErr(err error) error {
	return redactedError{msg: m.redact(err.Error()), cause: err}
}

// redactedError shows a redacted text but keeps the cause for errors.Is,
// so a timeout is still recognisable.
type redactedError struct {
	msg   string
	cause error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.cause }

// truncateUTF8 cuts b to at most n bytes without splitting a character.
func truncateUTF8(b []byte, n int) string {
	if len(b) <= n {
		return strings.TrimSpace(string(b))
	}
	b = b[:n]
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return strings.TrimSpace(string(b)) + "…"
}
