package scim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	filter "github.com/scim2/filter-parser/v2"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// maxMembersPerWrite bounds the members one request adds or sets.
const maxMembersPerWrite = 10000

// groupDefs are the attributes a group's body may hold.
var groupDefs = slices.Concat(groupSchema.Attributes, commonAttributes)

// groupDoc is a group as a request gives it, checked.
type groupDoc struct {
	displayName, externalID string
	members                 []string // user IDs; nil when the body names none
}

// readGroup checks a group's body against the schema.
func readGroup(body map[string]any) (*groupDoc, error) {
	if err := checkSchemas(body, schemaGroup); err != nil {
		return nil, err
	}
	rest := make(map[string]any, len(body))
	for k, v := range body {
		if !strings.EqualFold(k, "schemas") {
			rest[k] = v
		}
	}
	data, err := normalize(groupDefs, rest, "")
	if err != nil {
		return nil, err
	}
	d := &groupDoc{displayName: text(data, "displayName"), externalID: text(data, "externalId")}
	if d.displayName == "" {
		return nil, badRequest(typeInvalidValue, "displayName is required")
	}
	if list, ok := data["members"].([]any); ok {
		if d.members, err = memberIDs(list); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// memberIDs are the user IDs of members values; only users are members.
func memberIDs(list []any) ([]string, error) {
	if len(list) > maxMembersPerWrite {
		return nil, badRequest(typeInvalidValue, "at most %d members per request", maxMembersPerWrite)
	}
	ids := make([]string, 0, len(list))
	for i, item := range list {
		m, _ := item.(map[string]any)
		id := text(m, "value")
		if id == "" {
			return nil, badRequest(typeInvalidValue, "members[%d].value is required", i)
		}
		if t := text(m, "type"); t != "" && !strings.EqualFold(t, "User") {
			return nil, badRequest(typeInvalidValue, "members[%d]: only users are members of groups", i)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// checkMembers refuses member IDs that are no users of the realm.
func checkMembers(r *http.Request, st *store.Store, realmID string, ids []string) error {
	found, err := st.RealmUsersExist(r.Context(), realmID, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !found[id] {
			return badRequest(typeInvalidValue, "member %q is no user of the realm", id)
		}
	}
	return nil
}

// renderGroup is a group as SCIM shows it; members only when asked
// (withMembers), read in full then.
func (s *Service) renderGroup(r *http.Request, st *store.Store, g *store.Group, withMembers bool) (map[string]any, error) {
	ctx := r.Context()
	sg, err := st.SCIMGroupOf(ctx, g.ID)
	if err != nil {
		return nil, err
	}
	count, _, err := st.GroupCounts(ctx, g.ID)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{"schemas": []any{schemaGroup}, "id": g.ID, "displayName": g.Name}
	if sg.ExternalID != "" {
		doc["externalId"] = sg.ExternalID
	}
	modified := sg.ModifiedAt
	if modified == 0 {
		modified = g.CreatedAt
	}
	meta := map[string]any{"resourceType": "Group", "created": scimTime(g.CreatedAt), "lastModified": scimTime(modified),
		"location": s.location(r, "Groups/"+g.ID), "version": groupVersion(doc, modified, count)}
	if withMembers && count > 0 {
		users, err := st.ListGroupMembers(ctx, g.ID, 0, math.MaxInt)
		if err != nil {
			return nil, err
		}
		list := make([]any, len(users))
		for i, u := range users {
			list[i] = map[string]any{"value": u.ID, "$ref": s.location(r, "Users/"+u.ID), "display": u.Username, "type": "User"}
		}
		doc["members"] = list
	}
	doc["meta"] = meta
	return doc, nil
}

// groupVersion is a group's ETag: a digest of its attributes but members,
// when SCIM last changed it, and how many members it has, so that it
// never needs every member read.
func groupVersion(doc map[string]any, modified int64, members int) string {
	b, _ := json.Marshal(doc)
	sum := sha256.Sum256(append(b, []byte(strconv.FormatInt(modified, 10)+"/"+strconv.Itoa(members))...))
	return `W/"` + hex.EncodeToString(sum[:12]) + `"`
}

// wantsMembers says whether the request's attributes parameters show
// members.
func wantsMembers(attributes, excluded []string) bool {
	named := func(list []string) bool {
		return slices.ContainsFunc(list, func(a string) bool {
			a = strings.ToLower(a)
			return a == "members" || strings.HasPrefix(a, "members.") || strings.HasSuffix(a, ":members") ||
				strings.Contains(a, ":members.")
		})
	}
	if len(attributes) > 0 {
		return named(attributes)
	}
	return !named(excluded)
}

// group loads the group the path names.
func (s *Service) group(r *http.Request, st *store.Store) (*store.Group, error) {
	id := mux.Vars(r)["id"]
	g, err := st.GetGroup(r.Context(), callerOf(r).realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fail(http.StatusNotFound, "", "group %q not found", id)
	}
	return g, err
}

// CreateGroup makes a top-level group of the realm with its members.
func (s *Service) CreateGroup(w http.ResponseWriter, r *http.Request) error {
	ctx, realm := r.Context(), callerOf(r).realm
	body, err := readObject(r)
	if err != nil {
		return err
	}
	doc, err := readGroup(body)
	if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	g := &store.Group{ID: uuid.NewString(), RealmID: realm.ID, Name: doc.displayName, CreatedAt: now}
	if err := identity.ValidateGroup(g); err != nil {
		return err
	}
	var res map[string]any
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := checkMembers(r, tx, realm.ID, doc.members); err != nil {
			return err
		}
		if err := tx.CreateGroup(ctx, g); err != nil {
			return err
		}
		if err := tx.PutSCIMGroup(ctx, realm.ID, g.ID, store.SCIMGroup{ExternalID: doc.externalID, ModifiedAt: now}); err != nil {
			return err
		}
		for _, id := range doc.members {
			if err := tx.AddGroupMember(ctx, g.ID, id); err != nil {
				return err
			}
		}
		res, err = s.renderGroup(r, tx, g, true)
		return err
	})
	if err != nil {
		return err
	}
	return answer(w, r, http.StatusCreated, res)
}

// GetGroup answers one group, its members unless excluded.
func (s *Service) GetGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := s.group(r, s.deps.Store)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	res, err := s.renderGroup(r, s.deps.Store, g, wantsMembers(splitList(q.Get("attributes")), splitList(q.Get("excludedAttributes"))))
	if err != nil {
		return err
	}
	return answer(w, r, http.StatusOK, res)
}

// ListGroups answers a page of the realm's groups matching a filter.
func (s *Service) ListGroups(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOfURL(r)
	if err != nil {
		return err
	}
	return s.listGroups(w, r, q)
}

// SearchGroups is ListGroups with the query in the body.
func (s *Service) SearchGroups(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOfBody(r)
	if err != nil {
		return err
	}
	return s.listGroups(w, r, q)
}

func (s *Service) listGroups(w http.ResponseWriter, r *http.Request, q query) error {
	sq, err := groupQuery(q)
	if err != nil {
		return err
	}
	groups, total, err := s.deps.Store.SearchSCIMGroups(r.Context(), callerOf(r).realm.ID, sq)
	if err != nil {
		return err
	}
	if q.Count == nil && total > maxResults {
		return badRequest(typeTooMany, "the query matches %d groups, more than %d: ask for pages with startIndex and count",
			total, maxResults)
	}
	withMembers := wantsMembers(q.Attributes, q.ExcludedAttributes)
	list := make([]any, len(groups))
	for i, g := range groups {
		res, err := s.renderGroup(r, s.deps.Store, g, withMembers)
		if err != nil {
			return err
		}
		if list[i], err = project(res, q.Attributes, q.ExcludedAttributes); err != nil {
			return err
		}
	}
	writeSCIM(w, http.StatusOK, newList(list, total, sq.Offset+1))
	return nil
}

// groupQuery translates a list request on groups to a store query.
func groupQuery(q query) (store.SCIMQuery, error) {
	var sq store.SCIMQuery
	sq.Offset, sq.Limit = q.page()
	if q.Filter != "" {
		expr, err := parseFilter(q.Filter)
		if err != nil {
			return sq, err
		}
		if sq.Where, err = translate(expr, resolveGroupPath); err != nil {
			return sq, err
		}
	}
	switch strings.ToLower(q.SortOrder) {
	case "", "ascending":
	case "descending":
		sq.Desc = true
	default:
		return sq, badRequest(typeInvalidValue, "sortOrder must be ascending or descending")
	}
	if q.SortBy != "" {
		p, err := filter.ParseAttrPath([]byte(q.SortBy))
		if err != nil {
			return sq, badRequest(typeInvalidValue, "malformed sortBy %q", q.SortBy)
		}
		t, err := resolveGroupPath(p)
		if err != nil || t.field == "" {
			return sq, badRequest(typeInvalidValue, "cannot sort by %s", q.SortBy)
		}
		sq.SortField = t.field
	}
	return sq, nil
}

// resolveGroupPath finds what a filter's attribute path names on a group.
func resolveGroupPath(p filter.AttributePath) (*filterTarget, error) {
	if uri := p.URI(); uri != "" && !strings.EqualFold(uri, schemaGroup) {
		return nil, badRequest(typeInvalidFilter, "unknown schema %q in the filter", uri)
	}
	def := find(groupDefs, p.AttributeName)
	if def == nil {
		return nil, badRequest(typeInvalidFilter, "unknown attribute %q in the filter", p.String())
	}
	sub := p.SubAttributeName()
	switch strings.ToLower(def.Name) {
	case "id", "displayname", "externalid":
		if sub != "" {
			return nil, badRequest(typeInvalidFilter, "%s has no sub-attributes", def.Name)
		}
		return &filterTarget{def: def, field: strings.ToLower(def.Name)}, nil
	case "members":
		if sub != "" && !strings.EqualFold(sub, "value") {
			return nil, badRequest(typeInvalidFilter, "members can be filtered on by value only")
		}
		return &filterTarget{def: find(def.SubAttributes, "value"), attr: "members", multi: true}, nil
	case "meta":
		switch strings.ToLower(sub) {
		case "created":
			return &filterTarget{def: find(def.SubAttributes, sub), field: "created"}, nil
		case "lastmodified":
			return &filterTarget{def: find(def.SubAttributes, sub), field: "modified"}, nil
		}
	}
	return nil, badRequest(typeInvalidFilter, "%s cannot be filtered on", p.String())
}

// ReplaceGroup replaces a group's name, externalId and members (RFC 7644
// §3.5.1).
func (s *Service) ReplaceGroup(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	doc, err := readGroup(body)
	if err != nil {
		return err
	}
	return s.changeGroup(w, r, func(tx *store.Store, g *store.Group, sg *store.SCIMGroup) error {
		g.Name, sg.ExternalID = doc.displayName, doc.externalID
		if err := checkMembers(r, tx, g.RealmID, doc.members); err != nil {
			return err
		}
		if err := tx.ClearGroupMembers(r.Context(), g.ID); err != nil {
			return err
		}
		for _, id := range doc.members {
			if err := tx.AddGroupMember(r.Context(), g.ID, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteGroup deletes a group with its memberships (RFC 7644 §3.6).
func (s *Service) DeleteGroup(w http.ResponseWriter, r *http.Request) error {
	err := s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		g, err := s.group(r, tx)
		if err != nil {
			return err
		}
		current, err := s.renderGroup(r, tx, g, false)
		if err != nil {
			return err
		}
		if err := checkIfMatch(r, current); err != nil {
			return err
		}
		return tx.DeleteGroup(r.Context(), g.RealmID, g.ID)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// changeGroup applies change to a group in one transaction, after
// If-Match, and writes its name and SCIM attributes. The answer is the
// group, its members only when the attributes parameter asks for them
// (a large group is not read whole after a change of one member).
func (s *Service) changeGroup(w http.ResponseWriter, r *http.Request, change func(tx *store.Store, g *store.Group, sg *store.SCIMGroup) error) error {
	ctx := r.Context()
	q := r.URL.Query()
	attributes, excluded := splitList(q.Get("attributes")), splitList(q.Get("excludedAttributes"))
	var res map[string]any
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		g, err := s.group(r, tx)
		if err != nil {
			return err
		}
		current, err := s.renderGroup(r, tx, g, false)
		if err != nil {
			return err
		}
		if err := checkIfMatch(r, current); err != nil {
			return err
		}
		sg, err := tx.SCIMGroupOf(ctx, g.ID)
		if err != nil {
			return err
		}
		if err := change(tx, g, &sg); err != nil {
			return err
		}
		if err := identity.ValidateGroup(g); err != nil {
			return err
		}
		if err := tx.UpdateGroup(ctx, g); err != nil {
			return err
		}
		sg.ModifiedAt = s.deps.Now().UnixMilli()
		if err := tx.PutSCIMGroup(ctx, g.RealmID, g.ID, sg); err != nil {
			return err
		}
		res, err = s.renderGroup(r, tx, g, len(attributes) > 0 && wantsMembers(attributes, excluded) || r.Method == http.MethodPut)
		return err
	})
	if err != nil {
		return err
	}
	if r.Method == http.MethodPatch && len(attributes) == 0 {
		// RFC 7644 §3.5.2 allows 204 after a PATCH: the members are not
		// read back.
		w.Header().Set("ETag", text(metaOf(res), "version"))
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return answer(w, r, http.StatusOK, res)
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
