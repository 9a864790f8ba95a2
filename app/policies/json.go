package policies

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
)

// MaxDepth bounds the nesting of a request body's JSON: the free-form
// properties and context a caller sends reach the conditions as they are.
const MaxDepth = 32

// readBody reads a JSON body and refuses one nested deeper than MaxDepth,
// naming the field where it goes too deep.
func readBody(r *http.Request) ([]byte, error) {
	body, err := httpx.ReadBody(r)
	if err != nil {
		return nil, err
	}
	return body, checkDepth(body)
}

// strictJSON decodes a body as the admin API does: unknown fields, and
// fields named in another case, refused.
func strictJSON(body []byte, v any) error { return httpx.StrictUnmarshal(body, v) }

// checkDepth refuses JSON nested deeper than MaxDepth. The scan counts
// brackets outside strings; only a refusal walks the tokens, to name the
// field.
func checkDepth(body []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range body {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxDepth {
				return apperr.Field(deepField(body), "is nested deeper than %d levels", MaxDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// deepField names where body goes deeper than MaxDepth: the path down to
// the first free-form object on the way (context, properties), or down to
// where it goes too deep.
func deepField(body []byte) string {
	type frame struct {
		array     bool
		key       string
		index     int
		expectKey bool
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.array {
				fmt.Fprintf(&b, "[%d]", f.index)
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
			if f.key == "context" || f.key == "properties" {
				break
			}
		}
		if b.Len() == 0 {
			return "body"
		}
		return b.String()
	}
	// valueDone moves the enclosing frame past a value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		if top := &stack[len(stack)-1]; top.array {
			top.index++
		} else {
			top.expectKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		t, err := dec.Token()
		if err != nil {
			return "body"
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) >= MaxDepth {
					return path()
				}
				stack = append(stack, frame{array: d == '[', expectKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
			continue
		}
		if top := len(stack) - 1; top >= 0 && !stack[top].array && stack[top].expectKey {
			stack[top].key, _ = t.(string)
			stack[top].expectKey = false
			continue
		}
		valueDone()
	}
}
