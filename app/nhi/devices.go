package nhi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// MaxBulkDevices is the most devices one bulk registration takes.
const MaxBulkDevices = 1000

// BulkRegisterBody is the body of a bulk registration of devices.
type BulkRegisterBody struct {
	Devices      *[]IdentityCreate `json:"devices"`
	AllOrNothing bool              `json:"allOrNothing"`
}

// BulkResult is one device's outcome: 201 with its identity, or the error
// it would have had alone; "rolled_back" for a device that was fine but
// not registered, as another of an all-or-nothing request was not.
type BulkResult struct {
	Index       int          `json:"index"`
	Name        string       `json:"name"`
	Status      int          `json:"status"`
	Outcome     string       `json:"outcome"` // created, failed, rolled_back
	Identity    *IdentityRep `json:"identity,omitempty"`
	Error       string       `json:"error,omitempty"`
	Description string       `json:"error_description,omitempty"`
	Field       string       `json:"field,omitempty"`
}

// BulkAnswer is the answer to a bulk registration: a result per device.
type BulkAnswer struct {
	Created int          `json:"created"`
	Failed  int          `json:"failed"`
	Results []BulkResult `json:"results"`
}

// BulkRegisterDevices registers up to MaxBulkDevices identities of kind
// device in one request, each checked as a single creation is, and
// answers each one's outcome. Every device that passes is stored in one
// transaction; with allOrNothing, none is unless all pass.
func (s *Service) BulkRegisterDevices(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body BulkRegisterBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	switch {
	case body.Devices == nil:
		return apperr.Field("devices", "is required: an array of devices")
	case len(*body.Devices) == 0 || len(*body.Devices) > MaxBulkDevices:
		return apperr.Field("devices", "must have 1 to %d devices", MaxBulkDevices)
	}
	devices := *body.Devices
	ans := BulkAnswer{Results: make([]BulkResult, len(devices))}
	var ok []*store.NHI
	var okIndex []int
	seen := map[string]int{}
	for i := range devices {
		res := &ans.Results[i]
		res.Index = i
		if devices[i].Name != nil {
			res.Name = *devices[i].Name
		}
		n, err := s.newIdentity(r, realm, &devices[i], identity.NHIDevice)
		if err == nil {
			err = s.checkNameFree(r, realm, n, seen, i)
		}
		if err != nil {
			if e := (*apperr.Error)(nil); !errors.As(err, &e) || e.Status >= 500 {
				return err
			}
			failResult(res, err)
			continue
		}
		ok, okIndex = append(ok, n), append(okIndex, i)
	}
	ans.Failed = len(devices) - len(ok)
	if body.AllOrNothing && ans.Failed > 0 {
		for _, i := range okIndex {
			ans.Results[i].Status, ans.Results[i].Outcome = 0, "rolled_back"
		}
		return httpx.OK(w, ans)
	}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		for j, n := range ok {
			created, err := s.storeIdentity(r, tx, realm, n)
			if err != nil {
				return err
			}
			ok[j] = created
		}
		return nil
	})
	if err != nil {
		return err
	}
	for j, i := range okIndex {
		rep := toIdentityRep(ok[j])
		ans.Results[i].Status, ans.Results[i].Outcome, ans.Results[i].Identity = http.StatusCreated, "created", &rep
	}
	ans.Created = len(ok)
	return httpx.OK(w, ans)
}

func failResult(res *BulkResult, err error) {
	e := httpx.Classify(err)
	res.Status, res.Outcome, res.Error, res.Description, res.Field = e.Status, "failed", string(e.Code), e.Message, e.Field
}

// checkNameFree refuses a name that an identity or client of the realm
// has, or an earlier device of the same request.
func (s *Service) checkNameFree(r *http.Request, realm *store.Realm, n *store.NHI, seen map[string]int, i int) error {
	// Names that differ in case alone make the same service-account
	// username.
	key := strings.ToLower(n.Name)
	if j, dup := seen[key]; dup {
		return apperr.Conflict("name", "name %s is also the name of device %d of this request", n.Name, j)
	}
	seen[key] = i
	_, err := s.deps.Store.GetClientByClientID(r.Context(), realm.ID, n.Name)
	switch {
	case err == nil:
		return apperr.Conflict("name", "name %s is taken: an identity or client of this realm already has it", n.Name)
	case errors.Is(err, store.ErrNotFound):
		return nil
	}
	return err
}
