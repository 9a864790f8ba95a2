package webhooks

import "testing"

func TestNumericHost(t *testing.T) {
	for host, want := range map[string]bool{"2130706433": true, "0x7f.1": true, "127.1": true, "017700000001": true,
		"127.0.0.1": false, "hooks.example.com": false, "beef.dead": false, "cafe.example": false, "::1": false} {
		if got := numericHost(host); got != want {
			t.Errorf("numericHost(%q) = %v", host, got)
		}
	}
}
