package nhi

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// NHIAuditRep is a record of the audit log as the API shows it.
type NHIAuditRep struct {
	ID           string      `json:"id"`
	Time         int64       `json:"time"`
	IdentityID   string      `json:"identityId"`
	IdentityName string      `json:"identityName"`
	CredentialID string      `json:"credentialId,omitempty"`
	Action       string      `json:"action"`
	Actor        NHIActorRep `json:"actor"`
	IPAddress    string      `json:"ipAddress"`
	Details      string      `json:"details,omitempty"`
}

// NHIActorRep is who did what an audit record records.
type NHIActorRep struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

func toAuditRep(a *store.NHIAudit) NHIAuditRep {
	return NHIAuditRep{ID: a.ID, Time: a.Time, IdentityID: a.NHIID, IdentityName: a.NHIName, CredentialID: a.CredentialID,
		Action: a.Action, Actor: NHIActorRep{Type: a.ActorType, ID: a.ActorID, Name: a.ActorName}, IPAddress: a.IPAddress,
		Details: a.Details}
}

// auditTime reads a date parameter: a day (YYYY-MM-DD, UTC), which as an
// upper bound takes in the whole day, or an RFC 3339 time.
func auditTime(q, name string, end bool) (int64, error) {
	if q == "" {
		return 0, nil
	}
	if d, err := time.Parse(time.DateOnly, q); err == nil {
		if end {
			return d.Add(24*time.Hour).UnixMilli() - 1, nil
		}
		return d.UnixMilli(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, q)
	if err != nil {
		return 0, apperr.Parameter(name, "must be a date (YYYY-MM-DD) or an RFC 3339 time")
	}
	return t.UnixMilli(), nil
}

// ListAuditLogs lists the realm's audit log, newest first, a page at a
// time, filtered by identity, credential, action, actor and dates.
func (s *Service) ListAuditLogs(w http.ResponseWriter, r *http.Request) error {
	s.settle(r.Context())
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.NHIAuditFilter{NHIID: q.Get("identityId"), CredentialID: q.Get("credentialId"),
		Action: strings.ToUpper(q.Get("action")), ActorID: q.Get("actorId")}
	if f.Action != "" && !slices.Contains(identity.AuditActions, f.Action) {
		return apperr.Parameter("action", "must be one of %s", strings.Join(identity.AuditActions, ", "))
	}
	if f.From, err = auditTime(q.Get("dateFrom"), "dateFrom", false); err != nil {
		return err
	}
	if f.To, err = auditTime(q.Get("dateTo"), "dateTo", true); err != nil {
		return err
	}
	return httpx.ListPage(w, r, httpx.DefaultPageSize, func(first, max int) ([]*store.NHIAudit, error) {
		return s.deps.Store.ListNHIAudit(r.Context(), realm.ID, f, first, max)
	}, toAuditRep)
}

// DeleteAuditLogs deletes the realm's audit records before ?before= (a
// date or time), or all of them without it: the log's retention is the
// admin's to apply. It answers how many went.
func (s *Service) DeleteAuditLogs(w http.ResponseWriter, r *http.Request) error {
	s.settle(r.Context())
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	before, err := auditTime(r.URL.Query().Get("before"), "before", false)
	if err != nil {
		return err
	}
	n, err := s.deps.Store.DeleteNHIAudit(r.Context(), realm.ID, before)
	if err != nil {
		return err
	}
	return httpx.OK(w, AuditDeletion{Deleted: n})
}

// AuditDeletion is how many audit records a deletion took away.
type AuditDeletion struct {
	Deleted int64 `json:"deleted"`
}
