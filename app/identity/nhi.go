package identity

import (
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The rules of non-human identities (docs/nhi.md): what an identity may
// be, the states it moves between, and the client that backs it.

// The kinds of non-human identity.
const (
	NHIService  = "service"
	NHIWorkload = "workload"
	NHIDevice   = "device"
	NHIBot      = "bot"
	NHIAIAgent  = "ai_agent"
)

// NHIKinds lists the kinds in the order the documentation gives them.
var NHIKinds = []string{NHIService, NHIWorkload, NHIDevice, NHIBot, NHIAIAgent}

// The states of an identity. Only an active one obtains tokens; a
// decommissioned one stays decommissioned.
const (
	NHIActive         = "active"
	NHISuspended      = "suspended"
	NHIDecommissioned = "decommissioned"
)

// The owners an identity may name: a user or a group answers for it.
const (
	NHIOwnerUser  = "user"
	NHIOwnerGroup = "group"
)

// The state changes an admin asks for.
const (
	NHISuspend      = "suspend"
	NHIReactivate   = "reactivate"
	NHIDecommission = "decommission"
)

const (
	maxNHIMetadata      = 64
	maxNHIMetadataValue = 1024
)

var nhiMetadataKey = validate.MustPattern(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`, 1, 128)

// ValidateNHI checks the fields of an identity about to be stored. Its name
// becomes its backing client's clientId, so it follows the clientId rule.
func ValidateNHI(n *store.NHI) error {
	if !slices.Contains(NHIKinds, n.Kind) {
		return apperr.Field("kind", "must be one of %s", strings.Join(NHIKinds, ", "))
	}
	if !clientIDPattern.MatchString(n.Name) {
		return apperr.Field("name", "must be 2 to %d letters, digits, '-', '_' or '.'", maxClientIDLength)
	}
	if err := validate.Text("description", n.Description, 1024); err != nil {
		return err
	}
	switch n.OwnerType {
	case "":
		if n.OwnerID != "" {
			return apperr.Field("owner.type", "must be %s or %s", NHIOwnerUser, NHIOwnerGroup)
		}
	case NHIOwnerUser, NHIOwnerGroup:
		if n.OwnerID == "" {
			return apperr.Field("owner.id", "is required")
		}
	default:
		return apperr.Field("owner.type", "must be %s or %s", NHIOwnerUser, NHIOwnerGroup)
	}
	if len(n.Metadata) > maxNHIMetadata {
		return apperr.Field("metadata", "must have at most %d entries", maxNHIMetadata)
	}
	if err := checkAdminPermissions(n); err != nil {
		return err
	}
	for k, v := range n.Metadata {
		if !nhiMetadataKey.MatchString(k) {
			return apperr.Field("metadata", "key %q: must be 1 to 128 letters, digits, '.', '_', '/' or '-', starting with a letter or digit", k)
		}
		if err := validate.Text("metadata."+k, v, maxNHIMetadataValue); err != nil {
			return err
		}
	}
	return nil
}

// NHIClient is the client that backs a new identity: confidential, with
// only the client_credentials grant, so that it acts as its
// service-account user, and without a secret of its own: the identity's
// credentials authenticate it (CheckNHISecret).
func NHIClient(n *store.NHI) store.Client {
	return store.Client{ID: n.ClientID, RealmID: n.RealmID, ClientID: n.Name, Name: n.Name,
		Description: "backs the non-human identity " + n.Name, ClientType: ClientConfidential, Enabled: true,
		GrantTypes: []string{GrantClientCredentials}, BackchannelLogoutSessionRequired: true, CreatedAt: n.CreatedAt}
}

// errDecommissioned is every write to a decommissioned identity.
func errDecommissioned(n *store.NHI) error {
	return apperr.New(409, apperr.CodeInvalidState, "identity %s is decommissioned: it cannot be changed", n.Name)
}

// CheckNHIWritable refuses any write to a decommissioned identity:
// decommissioning cannot be undone.
func CheckNHIWritable(n *store.NHI) error {
	if n.State == NHIDecommissioned {
		return errDecommissioned(n)
	}
	return nil
}

// NHITransition is the state an identity in state from moves to on
// action. Suspending a suspended identity or reactivating an active one
// changes nothing; decommissioning is final.
func NHITransition(n *store.NHI, action string) (string, error) {
	if err := CheckNHIWritable(n); err != nil {
		return "", err
	}
	switch action {
	case NHISuspend:
		return NHISuspended, nil
	case NHIReactivate:
		return NHIActive, nil
	case NHIDecommission:
		return NHIDecommissioned, nil
	}
	return "", apperr.Invalid("unknown action %s", action)
}

// checkAdminPermissions: only a service account holds admin permissions,
// known ones, and none of the system's: its API keys act in its realm
// alone, so creating, importing or deleting realms is never among them.
func checkAdminPermissions(n *store.NHI) error {
	if len(n.AdminPermissions) == 0 {
		return nil
	}
	if n.Kind != NHIService {
		return apperr.Field("adminPermissions", "only a service account (kind %s) holds admin permissions", NHIService)
	}
	set, err := authz.Parse(n.AdminPermissions)
	if err != nil {
		return apperr.Field("adminPermissions", "%s", err.Error())
	}
	if set.Has(authz.SystemRead) || set.Has(authz.SystemManage) {
		return apperr.Field("adminPermissions", "%s and %s are not for a service account: it acts in its own realm",
			authz.SystemRead, authz.SystemManage)
	}
	n.AdminPermissions = authz.Names(set)
	return nil
}
