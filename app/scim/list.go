package scim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	filter "github.com/scim2/filter-parser/v2"

	"github.com/idenplane/idenplane/store"
)

// query is a list request (RFC 7644 §3.4.2): from the URL of a GET, or
// the body of a POST to .search.
type query struct {
	Filter             string   `json:"filter"`
	SortBy             string   `json:"sortBy"`
	SortOrder          string   `json:"sortOrder"`
	StartIndex         *int     `json:"startIndex"`
	Count              *int     `json:"count"`
	Attributes         []string `json:"attributes"`
	ExcludedAttributes []string `json:"excludedAttributes"`
}

// queryOfURL reads a list request's parameters.
func queryOfURL(r *http.Request) (query, error) {
	v := r.URL.Query()
	q := query{Filter: v.Get("filter"), SortBy: v.Get("sortBy"), SortOrder: v.Get("sortOrder"),
		Attributes: splitList(v.Get("attributes")), ExcludedAttributes: splitList(v.Get("excludedAttributes"))}
	for _, p := range []struct {
		name string
		dst  **int
	}{{"startIndex", &q.StartIndex}, {"count", &q.Count}} {
		if !v.Has(p.name) {
			continue
		}
		n, err := strconv.Atoi(v.Get(p.name))
		if err != nil {
			return q, badRequest(typeInvalidValue, "%s must be an integer", p.name)
		}
		*p.dst = &n
	}
	return q, nil
}

// queryOfBody reads the body of a POST to .search (RFC 7644 §3.4.3).
func queryOfBody(r *http.Request) (query, error) {
	var q query
	body, err := readObject(r)
	if err != nil {
		return q, err
	}
	if err := checkSchemas(body, schemaSearch); err != nil {
		return q, err
	}
	delete(body, "schemas")
	b, _ := json.Marshal(body)
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return q, badRequest(typeInvalidSyntax, "search request: %v", err)
	}
	return q, nil
}

// page is the part of the matches a list request asks for: RFC 7644
// §3.4.2.4's 1-based startIndex (below 1 counts as 1) and count (below 0
// counts as 0), at most maxResults.
func (q query) page() (offset, limit int) {
	offset, limit = 0, maxResults
	if q.StartIndex != nil && *q.StartIndex > 1 {
		offset = *q.StartIndex - 1
	}
	if q.Count != nil {
		limit = min(max(*q.Count, 0), maxResults)
	}
	return offset, limit
}

// ListUsers answers a page of the realm's users matching a filter, sorted
// (RFC 7644 §3.4.2). The filter runs as SQL on the store's tables.
func (s *Service) ListUsers(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOfURL(r)
	if err != nil {
		return err
	}
	return s.listUsers(w, r, q)
}

// SearchUsers is ListUsers with the query in the body (RFC 7644 §3.4.3).
func (s *Service) SearchUsers(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOfBody(r)
	if err != nil {
		return err
	}
	return s.listUsers(w, r, q)
}

func (s *Service) listUsers(w http.ResponseWriter, r *http.Request, q query) error {
	m, err := s.model(r)
	if err != nil {
		return err
	}
	sq, err := m.userQuery(q)
	if err != nil {
		return err
	}
	users, total, err := s.deps.Store.SearchSCIMUsers(r.Context(), callerOf(r).realm.ID, sq)
	if err != nil {
		return err
	}
	if q.Count == nil && total > maxResults {
		return badRequest(typeTooMany, "the query matches %d users, more than %d: ask for pages with startIndex and count",
			total, maxResults)
	}
	rendered, err := s.renderUsers(r, s.deps.Store, users)
	if err != nil {
		return err
	}
	list := make([]any, len(rendered))
	for i, res := range rendered {
		if list[i], err = project(res, q.Attributes, q.ExcludedAttributes); err != nil {
			return err
		}
	}
	start := sq.Offset + 1
	writeSCIM(w, http.StatusOK, newList(list, total, start))
	return nil
}

// userQuery translates a list request on users to a store query.
func (m *userModel) userQuery(q query) (store.SCIMQuery, error) {
	var sq store.SCIMQuery
	sq.Offset, sq.Limit = q.page()
	if q.Filter != "" {
		expr, err := parseFilter(q.Filter)
		if err != nil {
			return sq, err
		}
		if sq.Where, err = m.userMatch(expr); err != nil {
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
	if q.SortBy == "" {
		return sq, nil
	}
	p, err := filter.ParseAttrPath([]byte(q.SortBy))
	if err != nil {
		return sq, badRequest(typeInvalidValue, "malformed sortBy %q", q.SortBy)
	}
	t, err := m.resolvePath(p)
	if err != nil {
		return sq, badRequest(typeInvalidValue, "sortBy: %s", asSCIM(err).Detail)
	}
	switch {
	case t.alsoField != "":
		sq.SortField = t.alsoField // emails sort by the primary one, the users row's
	case t.field != "":
		sq.SortField = t.field
	case t.attr == "groups" || t.sub != "":
		return sq, badRequest(typeInvalidValue, "cannot sort by %s", q.SortBy)
	default:
		sq.SortAttr = t.attr
	}
	return sq, nil
}
