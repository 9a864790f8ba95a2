package identity

import (
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Credential policies: how long an identity's credentials may live
// (maxAge), when they are due for rotation (rotationInterval), the grace
// period a rotation keeps by default, and how long before either a
// credential counts as due (warnBefore).

// The rotation status of a credential under a policy.
const (
	RotationOK      = "ok"
	RotationDue     = "due"
	RotationOverdue = "overdue"
	RotationExpired = "expired"
)

const maxPolicySeconds = 10 * 365 * 24 * 3600

// ValidatePolicy checks a policy about to be stored.
func ValidatePolicy(p *store.NHIPolicy) error {
	if err := validate.DisplayName("name", p.Name, 255); err != nil {
		return err
	}
	if p.Name == "" {
		return apperr.Field("name", "is required")
	}
	if err := validate.Text("description", p.Description, 1024); err != nil {
		return err
	}
	for _, d := range []struct {
		field string
		v     int64
	}{{"maxAge", p.MaxAge}, {"rotationInterval", p.RotationInterval}, {"gracePeriod", p.GracePeriod}, {"warnBefore", p.WarnBefore}} {
		if d.v < 0 || d.v > maxPolicySeconds {
			return apperr.Field(d.field, "must be between 0 and %d seconds", maxPolicySeconds)
		}
	}
	switch {
	case p.MaxAge != 0 && p.RotationInterval > p.MaxAge:
		return apperr.Field("rotationInterval", "must not be longer than maxAge: a credential would expire before it is due")
	case p.GracePeriod > maxGracePeriodSeconds:
		return apperr.Field("gracePeriod", "must be at most %d seconds, as a rotation's", maxGracePeriodSeconds)
	}
	return nil
}

const maxGracePeriodSeconds = 30 * 24 * 3600

// PolicyExpiry is when a credential created at created (Unix ms) expires
// under p, given the expiry it has (0: none): the earlier of the two.
func PolicyExpiry(p *store.NHIPolicy, created, expires int64) int64 {
	if p == nil || p.MaxAge == 0 {
		return expires
	}
	limit := created + p.MaxAge*1000
	if expires == 0 || limit < expires {
		return limit
	}
	return expires
}

// RotationStatus is where credential c stands under policy p (nil for
// none) at now (Unix ms), with when it is due for rotation and when it
// expires (0: never): expired at its expiry; overdue from the end of the
// rotation interval; due from warnBefore ahead of either; else ok.
func RotationStatus(c *store.NHICredential, p *store.NHIPolicy, now int64) (status string, dueAt, expiresAt int64) {
	expiresAt = PolicyExpiry(p, c.CreatedAt, c.ExpiresAt)
	var warn int64
	if p != nil {
		warn = p.WarnBefore * 1000
		if p.RotationInterval != 0 {
			dueAt = c.CreatedAt + p.RotationInterval*1000
		}
	}
	switch {
	case expiresAt != 0 && now >= expiresAt:
		return RotationExpired, dueAt, expiresAt
	case dueAt != 0 && now >= dueAt:
		return RotationOverdue, dueAt, expiresAt
	case dueAt != 0 && now >= dueAt-warn, expiresAt != 0 && now >= expiresAt-warn && warn != 0:
		return RotationDue, dueAt, expiresAt
	}
	return RotationOK, dueAt, expiresAt
}
