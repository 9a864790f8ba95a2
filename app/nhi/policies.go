package nhi

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// NHIPolicyRep is a credential policy as the API shows it; durations in
// seconds, 0 for no bound.
type NHIPolicyRep struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Description      string `json:"description"`
	MaxAge           int64  `json:"maxAge"`
	RotationInterval int64  `json:"rotationInterval"`
	GracePeriod      int64  `json:"gracePeriod"`
	WarnBefore       int64  `json:"warnBefore"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
}

func toPolicyRep(p *store.NHIPolicy) NHIPolicyRep {
	return NHIPolicyRep{ID: p.ID, Name: p.Name, Description: p.Description, MaxAge: p.MaxAge, RotationInterval: p.RotationInterval,
		GracePeriod: p.GracePeriod, WarnBefore: p.WarnBefore, CreatedTimestamp: p.CreatedAt}
}

// NHIPolicyBody is the body that creates a credential policy or
// replaces its fields.
type NHIPolicyBody struct {
	Name             *string `json:"name"`
	Description      *string `json:"description"`
	MaxAge           *int64  `json:"maxAge"`
	RotationInterval *int64  `json:"rotationInterval"`
	GracePeriod      *int64  `json:"gracePeriod"`
	WarnBefore       *int64  `json:"warnBefore"`
}

func (b *NHIPolicyBody) apply(p *store.NHIPolicy) {
	for _, f := range []struct {
		src *int64
		dst *int64
	}{{b.MaxAge, &p.MaxAge}, {b.RotationInterval, &p.RotationInterval}, {b.GracePeriod, &p.GracePeriod}, {b.WarnBefore, &p.WarnBefore}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if b.Name != nil {
		p.Name = *b.Name
	}
	if b.Description != nil {
		p.Description = *b.Description
	}
}

func policyConflict(err error, p *store.NHIPolicy) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "name",
			Message: "a credential policy named " + p.Name + " already exists in this realm", Cause: err}
	}
	return err
}

// policy loads the realm and the policy the path's {policyId} names.
func (s *Service) policy(r *http.Request) (*store.Realm, *store.NHIPolicy, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := httpx.ChildOf(r, realm.ID, "policyId", "credential policy", s.deps.Store.GetNHIPolicy)
	return realm, p, err
}

// CreatePolicy makes a credential policy.
func (s *Service) CreatePolicy(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body NHIPolicyBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	p := &store.NHIPolicy{ID: uuid.NewString(), RealmID: realm.ID, CreatedAt: s.now().UnixMilli()}
	body.apply(p)
	if err := identity.ValidatePolicy(p); err != nil {
		return err
	}
	if err := s.deps.Store.CreateNHIPolicy(r.Context(), p); err != nil {
		return policyConflict(err, p)
	}
	return httpx.Created(w, s.location(r, p.ID), toPolicyRep(p))
}

// ListPolicies lists the realm's credential policies by name.
func (s *Service) ListPolicies(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	list, err := s.deps.Store.ListNHIPolicies(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, list, toPolicyRep)
}

// GetPolicy shows one credential policy.
func (s *Service) GetPolicy(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.policy(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toPolicyRep(p))
}

func policyUpdateDefaults() map[string]any {
	return map[string]any{"name": nil, "description": nil, "maxAge": 0, "rotationInterval": 0, "gracePeriod": 0, "warnBefore": 0}
}

// UpdatePolicy answers PUT: the fields the body names change. Credentials
// issued before keep their expiry; the upkeep job brings it forward to a
// shorter maximum age.
func (s *Service) UpdatePolicy(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.policy(r)
	if err != nil {
		return err
	}
	u, err := httpx.ReadUpdate[NHIPolicyRep](r, toPolicyRep(p), policyUpdateDefaults())
	if err != nil {
		return err
	}
	p.Name, p.Description, p.MaxAge, p.RotationInterval, p.GracePeriod, p.WarnBefore =
		u.Name, u.Description, u.MaxAge, u.RotationInterval, u.GracePeriod, u.WarnBefore
	if err := identity.ValidatePolicy(p); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateNHIPolicy(r.Context(), p); err != nil {
		return policyConflict(err, p)
	}
	return httpx.OK(w, toPolicyRep(p))
}

// DeletePolicy deletes a credential policy; its identities have none
// after.
func (s *Service) DeletePolicy(w http.ResponseWriter, r *http.Request) error {
	realm, p, err := s.policy(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteNHIPolicy(r.Context(), realm.ID, p.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// RotationEntryRep is one credential in a rotation status.
type RotationEntryRep struct {
	IdentityID       string `json:"identityId"`
	IdentityName     string `json:"identityName"`
	CredentialID     string `json:"credentialId"`
	Type             string `json:"type"`
	Name             string `json:"name"`
	PolicyID         string `json:"policyId,omitempty"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
	DueTimestamp     *int64 `json:"dueTimestamp"`
	ExpiresTimestamp *int64 `json:"expiresTimestamp"`
}

// RotationStatusRep lists the credentials due, overdue and expired.
type RotationStatusRep struct {
	Due     []RotationEntryRep `json:"due"`
	Overdue []RotationEntryRep `json:"overdue"`
	Expired []RotationEntryRep `json:"expired"`
}

// PolicyRotationStatus lists the credentials of the policy's identities
// that are due, overdue or expired now.
func (s *Service) PolicyRotationStatus(w http.ResponseWriter, r *http.Request) error {
	realm, p, err := s.policy(r)
	if err != nil {
		return err
	}
	rep, err := s.rotationStatus(r.Context(), realm.ID, p.ID)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// RotationStatus lists the realm's credentials that are due, overdue or
// expired now, under each identity's policy; a credential of an identity
// without one is only ever expired.
func (s *Service) RotationStatus(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	rep, err := s.rotationStatus(r.Context(), realm.ID, "")
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

func (s *Service) rotationStatus(ctx context.Context, realmID, policyID string) (RotationStatusRep, error) {
	rep := RotationStatusRep{Due: []RotationEntryRep{}, Overdue: []RotationEntryRep{}, Expired: []RotationEntryRep{}}
	now := s.now().UnixMilli()
	err := s.eachCredential(ctx, realmID, policyID, now, func(c *store.NHICredentialOf, p *store.NHIPolicy) error {
		status, due, expires := identity.RotationStatus(&c.NHICredential, p, now)
		e := RotationEntryRep{IdentityID: c.NHIID, IdentityName: c.NHIName, CredentialID: c.ID, Type: c.Type, Name: c.Name,
			PolicyID: c.PolicyID, CreatedTimestamp: c.CreatedAt, DueTimestamp: optionalTime(due), ExpiresTimestamp: optionalTime(expires)}
		switch status {
		case identity.RotationDue:
			rep.Due = append(rep.Due, e)
		case identity.RotationOverdue:
			rep.Overdue = append(rep.Overdue, e)
		case identity.RotationExpired:
			rep.Expired = append(rep.Expired, e)
		}
		return nil
	})
	return rep, err
}

// eachCredential calls fn with each credential not revoked by now (of
// the realm, "" for all, and of the policy, "" for any) and its
// identity's policy (nil for none).
func (s *Service) eachCredential(ctx context.Context, realmID, policyID string, now int64,
	fn func(*store.NHICredentialOf, *store.NHIPolicy) error) error {
	creds, err := s.deps.Store.ListWorkingNHICredentials(ctx, realmID, policyID, now)
	if err != nil {
		return err
	}
	policies := map[string]*store.NHIPolicy{}
	for _, c := range creds {
		var p *store.NHIPolicy
		if c.PolicyID != "" {
			var ok bool
			if p, ok = policies[c.PolicyID]; !ok {
				p, err = s.deps.Store.GetNHIPolicy(ctx, c.RealmID, c.PolicyID)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
				policies[c.PolicyID] = p
			}
		}
		if err := fn(c, p); err != nil {
			return err
		}
	}
	return nil
}

// Sweep is the upkeep job's part for the identities: it brings forward
// the expiry of credentials past their policy's maximum age, and
// announces, once each, credentials expiring within their policy's
// warning and credentials expired, as NHI_CREDENTIAL_EXPIRING and
// NHI_CREDENTIAL_EXPIRED audit records (which webhooks will carry).
func (s *Service) Sweep(ctx context.Context) (expiring, expired int, err error) {
	now := s.now().UnixMilli()
	system := identity.Actor{Type: identity.ActorSystem}
	err = s.eachCredential(ctx, "", "", now, func(c *store.NHICredentialOf, p *store.NHIPolicy) error {
		status, _, expires := identity.RotationStatus(&c.NHICredential, p, now)
		if expires != 0 && (c.ExpiresAt == 0 || expires < c.ExpiresAt) {
			if err := s.deps.Store.ExpireNHICredential(ctx, c.ID, expires); err != nil {
				return err
			}
		}
		var action string
		switch {
		case status == identity.RotationExpired && c.ExpiredNoticedAt == 0:
			action = identity.AuditCredentialExpired
		case status != identity.RotationExpired && expires != 0 && p != nil && p.WarnBefore != 0 &&
			now >= expires-p.WarnBefore*1000 && c.ExpiringNoticedAt == 0:
			action = identity.AuditCredentialExpiring
		default:
			return nil
		}
		return s.deps.Store.Tx(ctx, func(tx *store.Store) error {
			first, err := tx.NoticeNHICredential(ctx, c.ID, action == identity.AuditCredentialExpired, now)
			if err != nil || !first {
				return err
			}
			if action == identity.AuditCredentialExpired {
				expired++
			} else {
				expiring++
			}
			n := &store.NHI{ID: c.NHIID, RealmID: c.RealmID, Name: c.NHIName}
			return s.deps.Core.AuditNHI(ctx, tx, n, c.ID, action, system, "expires "+formatMillis(expires))
		})
	})
	return expiring, expired, err
}
