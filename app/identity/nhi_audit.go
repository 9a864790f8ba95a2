package identity

import (
	"context"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// The audit log of the identities: what happened to one, and who did it.

// The actions of the audit log.
const (
	AuditCreate            = "CREATE"
	AuditUpdate            = "UPDATE"
	AuditDelete            = "DELETE"
	AuditSuspend           = "SUSPEND"
	AuditReactivate        = "REACTIVATE"
	AuditDecommission      = "DECOMMISSION"
	AuditCredentialIssue   = "CREDENTIAL_ISSUE"
	AuditCredentialRotate  = "CREDENTIAL_ROTATE"
	AuditCredentialRevoke  = "CREDENTIAL_REVOKE"
	AuditCredentialUse     = "CREDENTIAL_USE"
	AuditCredentialRefused = "AUTHENTICATION_REFUSED"
	// The upkeep job's announcements, which webhooks will carry.
	AuditCredentialExpiring = "NHI_CREDENTIAL_EXPIRING"
	AuditCredentialExpired  = "NHI_CREDENTIAL_EXPIRED"
)

// AuditActions lists the actions, for the log's filter.
var AuditActions = []string{AuditCreate, AuditUpdate, AuditDelete, AuditSuspend, AuditReactivate, AuditDecommission,
	AuditCredentialIssue, AuditCredentialRotate, AuditCredentialRevoke, AuditCredentialUse, AuditCredentialRefused,
	AuditCredentialExpiring, AuditCredentialExpired}

// The actor types besides an admin credential's kind: an identity acting
// itself, and the server's upkeep job.
const (
	ActorIdentity = "identity"
	ActorSystem   = "system"
)

// Actor is who did what an audit record records, and from where.
type Actor struct {
	Type string // an admin credential's kind (api-key, user), or ActorIdentity
	ID   string
	Name string
	IP   string
}

// AuditNHI appends a record of action on identity n (and its credential
// credID, if any) by actor, on q: the caller's transaction, so that the
// record and what it records commit together, or the pool.
func (c *Core) AuditNHI(ctx context.Context, q *store.Store, n *store.NHI, credID, action string, actor Actor, details string) error {
	return q.AddNHIAudit(ctx, c.nhiAudit(n, credID, action, actor, details))
}

// nhiAudit is the audit record of action on n, now.
func (c *Core) nhiAudit(n *store.NHI, credID, action string, actor Actor, details string) *store.NHIAudit {
	return &store.NHIAudit{ID: uuid.Must(uuid.NewV7()).String(), RealmID: n.RealmID, Time: c.now().UnixMilli(),
		NHIID: n.ID, NHIName: n.Name, CredentialID: credID, Action: action, ActorType: actor.Type, ActorID: actor.ID,
		ActorName: actor.Name, IPAddress: actor.IP, Details: details}
}
