package app

import (
	"encoding/json"
	"testing"
)

// marshalClaims writes what json.Marshal writes, byte for byte.
func TestMarshalClaimsAsEncodingJSON(t *testing.T) {
	strs := []string{"", "alice", "Zoë", "a\"b", `back\slash`, "<script>&", "tab\there", "line\u2028sep", "bad\xffutf8",
		"\x00\x1f\x7f", "日本", "https://idp.example/realms/r?x=1&y=2"}
	claims := map[string]any{
		"iss": "https://idp.example/realms/r", "sub": "0193f3c4-8a52-7b5e", "exp": int64(1900000000), "iat": 1800000000,
		"email_verified": false, "active": true, "nothing": nil, "amr": []string{"pwd", "otp"}, "none": []string{},
		"realm_access":    map[string]any{"roles": []any{"admin", "user"}},
		"resource_access": map[string]any{"app": map[string]any{"roles": []any{"viewer"}}, "empty": map[string]any{}},
		"allowed-origins": []any{"https://a.example", int64(3), true, nil, []any{}},
		"number":          json.Number("12.5"), "float": 0.1, "big": 1e21, "strings": map[string]string{"a": "b"},
		"ints": []int{1, 2}, "nil list": []string(nil), "nil any list": []any(nil), "nil object": map[string]any(nil),
	}
	for _, s := range strs {
		claims["s"+s] = s
		claims[s] = []any{s, map[string]any{s: s}}
	}
	got, err := marshalClaims(claims)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("marshalClaims:\n%s\njson.Marshal:\n%s", got, want)
	}
}

// A value json.Marshal refuses is refused.
func TestMarshalClaimsRefusesWhatJSONRefuses(t *testing.T) {
	for _, v := range []any{make(chan int), func() {}, map[string]any{"x": []any{complex(1, 2)}}} {
		if _, err := marshalClaims(map[string]any{"v": v}); err == nil {
			t.Errorf("%T encoded", v)
		}
	}
}
