package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// maxProfileBytes bounds an upstream's userinfo or emails answer.
const maxProfileBytes = 1 << 20

// upstreamIdentity is who signed in upstream, as the provider's claim
// mapping reads it.
type upstreamIdentity struct {
	Subject       string            `json:"subject"`
	Username      string            `json:"username"`
	Email         string            `json:"email"`
	EmailVerified bool              `json:"emailVerified"`
	FirstName     string            `json:"firstName"`
	LastName      string            `json:"lastName"`
	Attributes    map[string]string `json:"attributes,omitempty"`
	Roles         []string          `json:"roles,omitempty"` // realm roles the mapping grants
	Token         string            `json:"token,omitempty"` // the token response, when the provider keeps it
	// IDToken is the upstream's ID token, kept for the sign-out there
	// when the provider has upstreamLogout.
	IDToken string `json:"-"`
}

// mapClaims reads an upstream identity from claims (an ID token's, or a
// userinfo answer) with mapping m. The subject is required; the username
// falls back to the email, then to the subject; an email that is not one
// is left out rather than refused.
func mapClaims(m ClaimMapping, claims map[string]any) (*upstreamIdentity, error) {
	id := &upstreamIdentity{Subject: claimString(claims, m.Subject)}
	if id.Subject == "" {
		return nil, fmt.Errorf("the upstream profile has no %s", m.Subject)
	}
	if err := validate.Setting("subject", id.Subject, 255); err != nil {
		return nil, fmt.Errorf("the upstream subject: %w", err)
	}
	if email, err := validate.NormalizeEmail(claimString(claims, m.Email)); err == nil {
		id.Email = email
		id.EmailVerified = claimBool(claims, m.EmailVerified)
	}
	id.Username = strings.ToLower(strings.TrimSpace(claimString(claims, m.Username)))
	if id.Username == "" {
		id.Username = id.Email
	}
	if id.Username == "" {
		id.Username = strings.ToLower(id.Subject)
	}
	id.FirstName, id.LastName = claimString(claims, m.FirstName), claimString(claims, m.LastName)
	for _, name := range slices.Sorted(maps.Keys(m.Attributes)) {
		if v := claimString(claims, m.Attributes[name]); v != "" {
			if id.Attributes == nil {
				id.Attributes = map[string]string{}
			}
			id.Attributes[name] = v
		}
	}
	if m.RolesClaim != "" {
		for _, v := range claimStrings(claims, m.RolesClaim) {
			if role, ok := m.Roles[v]; ok && !slices.Contains(id.Roles, role) {
				id.Roles = append(id.Roles, role)
			}
		}
		slices.Sort(id.Roles)
	}
	return id, nil
}

// claim finds a claim by name, or, failing that, by a dotted path into
// nested objects ("realm_access.roles").
func claim(claims map[string]any, name string) any {
	if name == "" {
		return nil
	}
	if v, ok := claims[name]; ok {
		return v
	}
	var cur any = claims
	for part := range strings.SplitSeq(name, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	return cur
}

// claimString is a claim as text: a string as it is, a number in decimal
// (GitHub's user IDs are numbers), anything else empty.
func claimString(claims map[string]any, name string) string {
	switch v := claim(claims, name).(type) {
	case string:
		return strings.TrimSpace(v)
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// claimBool is a boolean claim; some providers send "true" as a string.
func claimBool(claims map[string]any, name string) bool {
	switch v := claim(claims, name).(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}

// claimStrings is a claim holding several values: an array of strings, or
// one string of space-separated values.
func claimStrings(claims map[string]any, name string) []string {
	switch v := claim(claims, name).(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, item := range v {
			if s, ok := item.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// userinfo reads the profile of an OAuth 2.0 provider from its userinfo
// endpoint. For GitHub, whose /user shows only the public email, the email
// is the primary verified one from /user/emails.
func (s *Service) userinfo(ctx context.Context, p *store.IdentityProvider, tok *oauth2.Token) (map[string]any, error) {
	var claims map[string]any
	if err := s.getJSON(ctx, p.UserinfoURL, tok, &claims); err != nil {
		return nil, fail(errUpstream, "userinfo_failed", err)
	}
	if p.ProviderType == TypeGitHub {
		var emails []githubEmail
		if err := s.getJSON(ctx, strings.TrimSuffix(p.UserinfoURL, "/")+"/emails", tok, &emails); err != nil {
			return nil, fail(errUpstream, "userinfo_failed", err)
		}
		claims["email"], claims["email_verified"] = primaryEmail(emails)
	}
	return claims, nil
}

// githubEmail is one address of GitHub's /user/emails.
type githubEmail struct {
	Email    string `json:"email"`
	Primary  bool   `json:"primary"`
	Verified bool   `json:"verified"`
}

// primaryEmail is the primary address if verified, else the first
// verified one; none verified, no email.
func primaryEmail(emails []githubEmail) (string, bool) {
	for _, e := range emails {
		if e.Primary && e.Verified {
			return e.Email, true
		}
	}
	for _, e := range emails {
		if e.Verified {
			return e.Email, true
		}
	}
	return "", false
}

// getJSON GETs url with the access token and decodes its JSON answer (at
// most maxProfileBytes) into v.
func (s *Service) getJSON(ctx context.Context, url string, tok *oauth2.Token, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	tok.SetAuthHeader(req)
	req.Header.Set("Accept", "application/json")
	res, err := s.deps.Client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxProfileBytes+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, res.Status)
	}
	if len(body) > maxProfileBytes {
		return fmt.Errorf("%s answered more than %d bytes", url, maxProfileBytes)
	}
	return decodeProfile(body, v)
}

// decodeProfile decodes an upstream's JSON answer, numbers kept exact.
func decodeProfile(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode the upstream's answer: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("the upstream's answer has more after its JSON value")
	}
	if m, ok := v.(*map[string]any); ok && *m == nil {
		return errors.New("the upstream's answer is not a JSON object")
	}
	return nil
}

// tokenJSON is what is kept of a token response when the provider keeps
// tokens.
func tokenJSON(tok *oauth2.Token) (string, error) {
	out := map[string]any{"access_token": tok.AccessToken, "token_type": tok.Type()}
	if tok.RefreshToken != "" {
		out["refresh_token"] = tok.RefreshToken
	}
	if !tok.Expiry.IsZero() {
		out["expires_at"] = tok.Expiry.UTC().Format(time.RFC3339)
	}
	if id, ok := tok.Extra("id_token").(string); ok {
		out["id_token"] = id
	}
	b, err := json.Marshal(out)
	return string(b), err
}
