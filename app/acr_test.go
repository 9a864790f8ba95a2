package app

import (
	"slices"
	"testing"
)

func TestACROf(t *testing.T) {
	for _, tc := range []struct {
		amr  []string
		want string
	}{
		{nil, "1"},
		{[]string{"pwd"}, "1"},
		{[]string{"otp"}, "1"},
		{[]string{"hwk"}, "1"},               // a key without user verification
		{[]string{"hwk", "swk"}, "1"},        // two keys are one kind of factor
		{[]string{"pwd", "otp"}, "2"},        // password and TOTP or a recovery code
		{[]string{"pwd", "hwk"}, "2"},        // password and a security key
		{[]string{"pwd", "swk"}, "2"},        // password and a synced passkey
		{[]string{"hwk", "mfa"}, "2"},        // a passkey that verified its user
		{[]string{"swk", "mfa"}, "2"},        // a synced one
		{[]string{"otp", "hwk"}, "2"},        // a code and a key
		{[]string{"pwd", "otp", "hwk"}, "2"}, // stepped up again with a key
		{[]string{"pwd", "pwd"}, "1"},
		{[]string{"pwd", "sms"}, "1"}, // a method this server does not know counts for nothing
	} {
		if got := acrOf(tc.amr); got != tc.want {
			t.Errorf("acrOf(%v) = %q, want %q", tc.amr, got, tc.want)
		}
	}
}

func TestRaiseAMR(t *testing.T) {
	for _, tc := range []struct {
		amr, proved, want []string
	}{
		{[]string{"pwd"}, []string{"otp"}, []string{"pwd", "otp"}},
		{[]string{"pwd"}, []string{"hwk"}, []string{"pwd", "hwk"}},
		{[]string{"pwd", "otp"}, []string{"otp"}, []string{"pwd", "otp"}},
		{[]string{"pwd", "otp"}, []string{"swk"}, []string{"pwd", "otp", "swk"}},
	} {
		amr := slices.Clone(tc.amr)
		if got := raiseAMR(amr, tc.proved); !slices.Equal(got, tc.want) {
			t.Errorf("raiseAMR(%v, %v) = %v, want %v", tc.amr, tc.proved, got, tc.want)
		}
		if !slices.Equal(amr, tc.amr) {
			t.Errorf("raiseAMR changed its argument: %v", amr)
		}
	}
}

func TestACRDiscovery(t *testing.T) {
	e := newCodeflowEnv(t)
	var doc map[string]any
	if err := e.provider.Claims(&doc); err != nil {
		t.Fatal(err)
	}
	if got, _ := doc["acr_values_supported"].([]any); len(got) != 2 || got[0] != "1" || got[1] != "2" {
		t.Fatalf("acr_values_supported %v, want [1 2]", doc["acr_values_supported"])
	}
}
