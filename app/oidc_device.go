package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// The device authorization grant (RFC 8628): a device without a browser
// shows a user code, the user approves it on the device page, and the
// device polls the token endpoint with its device code meanwhile.

const (
	deviceCodeLifetime = 600 * time.Second
	devicePollInterval = 5 // seconds; RFC 8628's default
	// userCodeAlphabet has no vowels, so no words form, and no look-alike
	// letters or digits: RFC 8628 §6.1's example.
	userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
	userCodeLength   = 8
	// userCodeDraws bounds the retries on a user-code collision, which at
	// 20^8 codes is already unlikely once.
	userCodeDraws = 3
)

// DeviceAuthorization starts a device flow for a client allowed the
// device_code grant.
func (s *oidcServer) DeviceAuthorization(ctx context.Context, r *op.ClientRequest[oidc.DeviceAuthorizationRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	realm := signin.RealmFrom(ctx)
	oc := r.Client.(*oidcClient)
	if !oc.hasGrant(oidc.GrantTypeDeviceCode) {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("the device_code grant is not among this client's grant types")
	}
	scopes, err := s.a.grantScopes(ctx, realm, oc.c, r.Data.Scopes)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(scopes))
	for i, sc := range scopes {
		names[i] = sc.Name
	}
	now := s.a.now()
	deviceCode := newDeviceCode()
	d := &store.DeviceAuthorization{
		DeviceCodeHash: store.HashToken(deviceCode), RealmID: realm.ID, ClientID: oc.c.ID, Scopes: names,
		Interval: devicePollInterval, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(deviceCodeLifetime).UnixMilli(),
	}
	for range userCodeDraws {
		d.UserCode = newUserCode()
		if err = s.a.store.CreateDeviceAuthorization(ctx, d); !errors.Is(err, store.ErrConflict) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	verify := s.a.issuer(realm) + "/device"
	userCode := formatUserCode(d.UserCode)
	return op.NewResponse(&oidc.DeviceAuthorizationResponse{
		DeviceCode: deviceCode, UserCode: userCode,
		VerificationURI:         verify,
		VerificationURIComplete: verify + "?user_code=" + url.QueryEscape(userCode),
		ExpiresIn:               int(deviceCodeLifetime / time.Second), Interval: devicePollInterval,
	}), nil
}

// DeviceToken answers a device's poll: RFC 8628 §3.5's errors until the
// user decides, then tokens, once.
func (s *oidcServer) DeviceToken(ctx context.Context, r *op.ClientRequest[oidc.DeviceAccessTokenRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	realm := signin.RealmFrom(ctx)
	oc := r.Client.(*oidcClient)
	if !oc.hasGrant(oidc.GrantTypeDeviceCode) {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("the device_code grant is not among this client's grant types")
	}
	d, poll, err := s.a.store.PollDeviceAuthorization(ctx, realm.ID, store.HashToken(r.Data.DeviceCode), oc.c.ID, s.a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return nil, oidc.ErrInvalidGrant().WithDescription("unknown device code")
	} else if err != nil {
		return nil, err
	}
	switch poll {
	case store.DevicePollPending:
		return nil, oidc.ErrAuthorizationPending().WithDescription("the user has not decided yet")
	case store.DevicePollSlowDown:
		return nil, oidc.ErrSlowDown().WithDescription("polled too fast: wait %d seconds between polls", d.Interval)
	case store.DevicePollDenied:
		return nil, oidc.ErrAccessDenied().WithDescription("the user denied the request")
	case store.DevicePollExpired:
		return nil, oidc.ErrExpiredDeviceCode().WithDescription("the device code has expired")
	}
	user, err := s.a.store.GetUser(ctx, realm.ID, d.UserID)
	if errors.Is(err, store.ErrNotFound) || err == nil && !user.Enabled {
		return nil, oidc.ErrInvalidGrant().WithDescription("the approving user is no longer active")
	} else if err != nil {
		return nil, err
	}
	scopes, err := s.a.grantScopes(ctx, realm, oc.c, d.Scopes)
	if err != nil {
		return nil, err
	}
	// Approval signed the user in on the device page: the device gets an
	// SSO session no cookie points to, which sessions list and logout ends
	// like any other, and tokens as the other user grants do.
	now := s.a.now().UnixMilli()
	sso := NewSSOSession(realm, user, uuid.NewString(), "", now)
	sso.AuthTime = d.AuthTime
	plan := planClientGrant(realm, oc.c, sso, nil, scopeNames(scopes), now)
	err = s.a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateSession(ctx, sso); err != nil {
			return err
		}
		return plan.write(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return s.a.tokenResponse(ctx, &userTokens{
		g: &tokenGrant{realm: realm, client: oc.c, user: user, scopes: scopes, sid: sso.ID,
			authTime: time.UnixMilli(d.AuthTime)},
		amr: sso.AMR, refresh: plan.token,
	})
}

// newDeviceCode is 256 random bits, URL-safe: a bearer secret.
func newDeviceCode() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// newUserCode draws a user code uniformly from the alphabet, in the form
// the store keeps: no dash.
func newUserCode() string {
	code := make([]byte, 0, userCodeLength)
	buf := make([]byte, 16)
	// Bytes at or above the largest multiple of the alphabet's size are
	// dropped, so every letter is equally likely.
	limit := byte(256 / len(userCodeAlphabet) * len(userCodeAlphabet))
	for len(code) < userCodeLength {
		_, _ = rand.Read(buf)
		for _, b := range buf {
			if b < limit && len(code) < userCodeLength {
				code = append(code, userCodeAlphabet[int(b)%len(userCodeAlphabet)])
			}
		}
	}
	return string(code)
}

// formatUserCode shows a stored user code as people read it: XXXX-XXXX.
func formatUserCode(code string) string {
	return code[:userCodeLength/2] + "-" + code[userCodeLength/2:]
}

// normalizeUserCode turns what someone typed into the stored form: case,
// dashes and spaces do not matter. It reports false for anything that
// cannot be a user code, which then needs no lookup.
func normalizeUserCode(typed string) (string, bool) {
	code := strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToUpper(strings.TrimSpace(typed)))
	if len(code) != userCodeLength || strings.Trim(code, userCodeAlphabet) != "" {
		return "", false
	}
	return code, true
}
