package identity

import (
	"encoding/base64"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func TestClientCheckSecret(t *testing.T) {
	secret, hash := NewClientSecret()
	confidential := &store.Client{ClientType: ClientConfidential, SecretHash: hash}
	cases := []struct {
		name   string
		client *store.Client
		secret string
		want   bool
	}{
		{"right secret", confidential, secret, true},
		{"wrong secret", confidential, secret[:len(secret)-1] + "A", false},
		{"prefix", confidential, secret[:10], false},
		{"with suffix", confidential, secret + "x", false},
		{"empty", confidential, "", false},
		{"the hash itself", confidential, base64.RawURLEncoding.EncodeToString(hash), false},
		{"public client, empty secret", &store.Client{ClientType: ClientPublic}, "", false},
		{"public client, any secret", &store.Client{ClientType: ClientPublic}, secret, false},
		{"truncated hash", &store.Client{SecretHash: hash[:16]}, secret, false},
	}
	if secret[len(secret)-1] == 'A' {
		cases[1].secret = secret[:len(secret)-1] + "B"
	}
	for _, c := range cases {
		if got := CheckClientSecret(c.client, c.secret); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	other, _ := NewClientSecret()
	if other == secret || len(secret) != 43 {
		t.Fatalf("secrets %q %q", secret, other)
	}
}
