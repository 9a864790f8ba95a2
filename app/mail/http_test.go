package mail

import (
	"strings"
	"testing"
)

func TestHTTPMailerConfig(t *testing.T) {
	for _, tc := range []struct {
		provider string
		cfg      map[string]any
		wantErr  string
		wantBase string
	}{
		{"resend", map[string]any{}, "apiKey is required", ""},
		{"resend", map[string]any{"apiKey": 5.0}, "apiKey must be a string", ""},
		{"postmark", map[string]any{"apiKey": "k", "baseUrl": "ftp://x"}, "baseUrl must be", ""},
		{"mailgun", map[string]any{"apiKey": "k"}, "domain", ""},
		{"mailgun", map[string]any{"apiKey": "k", "domain": "mg.x.test", "region": "mars"}, "region", ""},
		{"mailgun", map[string]any{"apiKey": "k", "domain": "mg.x.test", "region": "eu"}, "", "https://api.eu.mailgun.net"},
		{"mailgun", map[string]any{"apiKey": "k", "domain": "mg.x.test"}, "", "https://api.mailgun.net"},
		{"sendgrid", map[string]any{"apiKey": "k"}, "", "https://api.sendgrid.com"},
		{"resend", map[string]any{"apiKey": "k", "baseUrl": "http://relay.internal:8080/"}, "", "http://relay.internal:8080"},
	} {
		m, err := httpMailerFor(tc.provider, tc.cfg, nil)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s %v: error %v, want %q", tc.provider, tc.cfg, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s %v: %v", tc.provider, tc.cfg, err)
		case tc.wantErr == "" && m.baseURL != tc.wantBase:
			t.Errorf("%s %v: base %s, want %s", tc.provider, tc.cfg, m.baseURL, tc.wantBase)
		}
	}
}
