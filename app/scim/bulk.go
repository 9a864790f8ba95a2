package scim

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/httpx"
)

// The Bulk endpoint's limits (RFC 7644 §3.7.4), advertised in
// ServiceProviderConfig and enforced with 413.
const (
	maxBulkOperations = 100
	maxBulkPayload    = 1 << 20 // bytes; the server's limit of every body
)

// bulkOp is one operation of a BulkRequest.
type bulkOp struct {
	Method  string          `json:"method"`
	BulkID  string          `json:"bulkId,omitempty"`
	Version string          `json:"version,omitempty"`
	Path    string          `json:"path"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// BulkResult is one operation's entry of the BulkResponse.
type BulkResult struct {
	Method   string `json:"method"`
	BulkID   string `json:"bulkId,omitempty"`
	Version  string `json:"version,omitempty"`
	Location string `json:"location,omitempty"`
	Status   string `json:"status"`
	Response any    `json:"response,omitempty"`
}

// BulkResponse is RFC 7644 §3.7.3's answer to a BulkRequest.
type BulkResponse struct {
	Schemas    []string      `json:"schemas"`
	Operations []*BulkResult `json:"Operations"`
}

// bulkRef is a reference to the resource another operation creates
// (RFC 7644 §3.7.2), anywhere in a path or in data.
var bulkRef = regexp.MustCompile(`bulkId:([A-Za-z0-9._~-]+)`)

// Bulk runs a BulkRequest (RFC 7644 §3.7): each operation as the endpoint
// of its path would, in an order that creates what a bulkId reference
// names before the operation that refers to it, until failOnErrors
// errors. A reference that cannot be resolved (to no operation, to one
// that failed, or in a cycle) fails its operation with 409.
func (s *Service) Bulk(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxBulkPayload)
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	raw, err := decodeObject(body)
	if err != nil {
		return err
	}
	if err := checkSchemas(raw, schemaBulkRequest); err != nil {
		return err
	}
	var req struct {
		FailOnErrors *int     `json:"failOnErrors"`
		Operations   []bulkOp `json:"Operations"`
	}
	delete(raw, keyOf(raw, "schemas"))
	b, _ := json.Marshal(raw)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return badRequest(typeInvalidSyntax, "bulk request: %v", err)
	}
	if len(req.Operations) == 0 {
		return badRequest(typeInvalidSyntax, "Operations must list at least one operation")
	}
	if len(req.Operations) > maxBulkOperations {
		return fail(http.StatusRequestEntityTooLarge, "", "the bulk request has %d operations, more than maxOperations %d",
			len(req.Operations), maxBulkOperations)
	}
	failOn := 0
	if req.FailOnErrors != nil {
		if *req.FailOnErrors < 1 {
			return badRequest(typeInvalidValue, "failOnErrors must be at least 1")
		}
		failOn = *req.FailOnErrors
	}
	seen := map[string]bool{}
	for i, op := range req.Operations {
		if strings.EqualFold(op.Method, http.MethodPost) && op.BulkID == "" {
			return badRequest(typeInvalidValue, "Operations[%d]: a POST needs a bulkId", i)
		}
		if op.BulkID != "" {
			if seen[op.BulkID] {
				return badRequest(typeInvalidValue, "Operations[%d]: bulkId %q is used twice", i, op.BulkID)
			}
			seen[op.BulkID] = true
		}
	}

	results := make([]*BulkResult, len(req.Operations))
	created := map[string]string{} // bulkId → the ID of the resource made
	failed := map[string]bool{}
	errorsSeen := 0
	for progress := true; progress && (failOn == 0 || errorsSeen < failOn); {
		progress = false
		for i, op := range req.Operations {
			if results[i] != nil || (failOn > 0 && errorsSeen >= failOn) {
				continue
			}
			resolved, pending, broken := resolveRefs(op, created, failed, seen)
			if pending {
				continue
			}
			progress = true
			res := &BulkResult{Method: strings.ToUpper(op.Method), BulkID: op.BulkID, Version: op.Version}
			if broken != "" {
				res.Status, res.Response = "409", errorResponse(fail(http.StatusConflict, typeInvalidValue, "%s", broken))
			} else {
				s.runBulkOp(r, resolved, res)
			}
			if code, _ := strconv.Atoi(res.Status); code >= 400 {
				errorsSeen++
				if op.BulkID != "" {
					failed[op.BulkID] = true
				}
			} else if op.BulkID != "" {
				created[op.BulkID] = res.Location[strings.LastIndex(res.Location, "/")+1:]
			}
			results[i] = res
		}
	}
	out := make([]*BulkResult, 0, len(results))
	for i, res := range results {
		switch {
		case res != nil:
		case failOn > 0 && errorsSeen >= failOn:
			continue // not run: the request stopped at failOnErrors
		default:
			op := req.Operations[i]
			res = &BulkResult{Method: strings.ToUpper(op.Method), BulkID: op.BulkID, Status: "409",
				Response: errorResponse(fail(http.StatusConflict, typeInvalidValue, "the bulkId references of this operation form a cycle"))}
		}
		out = append(out, res)
	}
	writeSCIM(w, http.StatusOK, BulkResponse{Schemas: []string{schemaBulkResponse}, Operations: out})
	return nil
}

// resolveRefs replaces the bulkId references of op with the IDs of the
// resources they name. pending: one names an operation not run yet;
// broken: why one can never resolve.
func resolveRefs(op bulkOp, created map[string]string, failed, known map[string]bool) (out bulkOp, pending bool, broken string) {
	out = op
	replace := func(s string) string {
		return bulkRef.ReplaceAllStringFunc(s, func(ref string) string {
			id := strings.TrimPrefix(ref, "bulkId:")
			switch {
			case created[id] != "":
				return created[id]
			case failed[id]:
				broken = "bulkId " + id + " names an operation that failed"
			case !known[id]:
				broken = "bulkId " + id + " names no operation of the request"
			default:
				pending = true
			}
			return ref
		})
	}
	out.Path = replace(op.Path)
	out.Data = json.RawMessage(replace(string(op.Data)))
	if broken != "" {
		pending = false
	}
	return out, pending, broken
}

// runBulkOp runs one operation through the handler of its path, as a
// request of the same caller would.
func (s *Service) runBulkOp(r *http.Request, op bulkOp, res *BulkResult) {
	method := strings.ToUpper(op.Method)
	h, vars, err := s.bulkHandler(method, op.Path)
	if err != nil {
		res.Status, res.Response = strconv.Itoa(asSCIM(err).Status), errorResponse(err)
		return
	}
	realm := callerOf(r).realm.Name
	vars["realm"] = realm
	var body *bytes.Reader
	if len(op.Data) > 0 && method != http.MethodDelete {
		body = bytes.NewReader(op.Data)
	} else {
		body = bytes.NewReader(nil)
	}
	sub, err := http.NewRequestWithContext(r.Context(), method, "/scim/v2/"+realm+op.Path, body)
	if err != nil {
		res.Status, res.Response = "400", errorResponse(badRequest(typeInvalidValue, "malformed path %q", op.Path))
		return
	}
	sub.Header.Set("Content-Type", mediaType)
	if op.Version != "" {
		sub.Header.Set("If-Match", op.Version)
	}
	sub = mux.SetURLVars(sub, vars)
	rec := httptest.NewRecorder()
	if err := h(rec, sub); err != nil {
		status := asSCIM(err).Status
		httpx.LogFailure(s.deps.Log, sub, status, err)
		res.Status, res.Response = strconv.Itoa(status), errorResponse(err)
		return
	}
	s.recordWrite(r, callerOf(r), method, op.Path, rec.Code, rec.Body.Bytes())
	res.Status = strconv.Itoa(rec.Code)
	res.Version = rec.Header().Get("ETag")
	res.Location = rec.Header().Get("Location")
	if res.Location == "" {
		res.Location = s.location(r, strings.TrimPrefix(op.Path, "/"))
	}
}

// bulkHandler is the handler of an operation's method and path.
func (s *Service) bulkHandler(method, path string) (func(http.ResponseWriter, *http.Request) error, map[string]string, error) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if !strings.HasPrefix(path, "/") || len(parts) > 2 || (len(parts) == 2 && parts[1] == "") ||
		(parts[0] != "Users" && parts[0] != "Groups") {
		return nil, nil, badRequest(typeInvalidPath, "path %q is no /Users or /Groups resource", path)
	}
	type key struct {
		method, kind string
		one          bool
	}
	handlers := map[key]func(http.ResponseWriter, *http.Request) error{
		{http.MethodPost, "Users", false}: s.CreateUser, {http.MethodPut, "Users", true}: s.ReplaceUser,
		{http.MethodPatch, "Users", true}: s.PatchUser, {http.MethodDelete, "Users", true}: s.DeleteUser,
		{http.MethodPost, "Groups", false}: s.CreateGroup, {http.MethodPut, "Groups", true}: s.ReplaceGroup,
		{http.MethodPatch, "Groups", true}: s.PatchGroup, {http.MethodDelete, "Groups", true}: s.DeleteGroup,
	}
	h, ok := handlers[key{method, parts[0], len(parts) == 2}]
	if !ok {
		return nil, nil, fail(http.StatusMethodNotAllowed, "", "%s %s is not a bulk operation", method, path)
	}
	vars := map[string]string{}
	if len(parts) == 2 {
		vars["id"] = parts[1]
	}
	return h, vars, nil
}

// errorResponse is an operation's error as a SCIM error body.
func errorResponse(err error) errorBody {
	e := asSCIM(err)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		e = fail(http.StatusRequestEntityTooLarge, "", "the operation's data is too large")
	}
	return errorBody{Schemas: []string{schemaError}, Status: strconv.Itoa(e.Status), ScimType: e.Type, Detail: e.Detail}
}
