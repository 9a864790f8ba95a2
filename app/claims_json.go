package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// marshalClaims encodes a token's claims exactly as json.Marshal does,
// keys sorted and the same escapes, without its reflection: encoding/json
// walks a map through reflect and allocates for every key and value, two
// dozen allocations for a token's dozen claims, on every token. The
// values the claims are made of (strings, booleans, integers, lists and
// objects of them) are written here; any other value is left to
// json.Marshal.
func marshalClaims(claims map[string]any) ([]byte, error) {
	return appendClaimValue(make([]byte, 0, 1024), claims)
}

func appendClaimValue(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case string:
		return appendClaimString(buf, v)
	case bool:
		return strconv.AppendBool(buf, v), nil
	case int:
		return strconv.AppendInt(buf, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(buf, v, 10), nil
	case []string:
		if v == nil {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '[')
		for i, s := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendClaimString(buf, s); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case []any:
		if v == nil {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '[')
		for i, e := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendClaimValue(buf, e); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case map[string]any:
		if v == nil {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '{')
		var room [32]string // a token's claims fit: no allocation for the keys
		keys := room[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendClaimString(buf, k); err != nil {
				return nil, err
			}
			buf = append(buf, ':')
			if buf, err = appendClaimValue(buf, v[k]); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("claim value %T: %w", v, err)
	}
	return append(buf, b...), nil
}

// appendClaimString writes s quoted. A string of printable ASCII that
// json.Marshal would not escape is copied; any other goes through
// json.Marshal, which escapes <, > and & and replaces invalid UTF-8.
func appendClaimString(buf []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			return append(buf, b...), nil
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), nil
}
