package scim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/httpx"
)

// readObject reads a SCIM request body: a JSON object (application/scim+json
// or application/json), and nothing after it.
func readObject(r *http.Request) (map[string]any, error) {
	body, err := httpx.ReadBody(r)
	if err != nil {
		return nil, err
	}
	return decodeObject(body)
}

func decodeObject(body []byte) (map[string]any, error) {
	if !httpx.IsObject(body) {
		return nil, badRequest(typeInvalidSyntax, "the body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, badRequest(typeInvalidSyntax, "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, badRequest(typeInvalidSyntax, "unexpected data after the JSON object")
	}
	return m, nil
}

// metaOf is a rendered resource's meta.
func metaOf(res map[string]any) map[string]any {
	m, _ := res["meta"].(map[string]any)
	return m
}

// checkIfMatch refuses a write whose If-Match names none of the
// resource's current versions (RFC 7644 §3.14): 412.
func checkIfMatch(r *http.Request, current map[string]any) error {
	h := r.Header.Get("If-Match")
	if h == "" || etagMatches(h, text(metaOf(current), "version")) {
		return nil
	}
	return fail(http.StatusPreconditionFailed, "", "the resource changed: its version is no longer %s", h)
}

// etagMatches says whether an If-Match or If-None-Match header names
// version, or is "*". Weak and strong forms of a tag compare equal.
func etagMatches(header, version string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == strings.TrimPrefix(version, "W/") {
			return true
		}
	}
	return false
}

// answer answers one resource with its ETag and, for a creation, its
// Location; a GET whose If-None-Match names its version is a 304. The
// attributes and excludedAttributes parameters shape what is shown.
func answer(w http.ResponseWriter, r *http.Request, status int, res map[string]any) error {
	meta := metaOf(res)
	v := text(meta, "version")
	w.Header().Set("ETag", v)
	if status == http.StatusCreated {
		w.Header().Set("Location", text(meta, "location"))
	}
	if r.Method == http.MethodGet {
		if h := r.Header.Get("If-None-Match"); h != "" && etagMatches(h, v) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
	}
	q := r.URL.Query()
	shown, err := project(res, splitList(q.Get("attributes")), splitList(q.Get("excludedAttributes")))
	if err != nil {
		return err
	}
	writeSCIM(w, status, shown)
	return nil
}

// splitList splits a comma-separated parameter.
func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
