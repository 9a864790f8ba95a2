// Package openapi builds the OpenAPI 3.1 document of the server's APIs from
// the route table (method, path, who may call it, its permission, its
// error shape) and what is known of each route beyond it (Op: its bodies
// as Go types, its query parameters), and renders it as JSON, YAML and a
// reference page. It knows nothing of the server: the app passes both in.
package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Info is what the document says of the server.
type Info struct {
	Title, Version, Description string
	// APIError is a value of the APIs' error body's Go type.
	APIError any
}

// Document is the built document: its JSON and YAML, and its operations
// for the reference page.
type Document struct {
	JSON       []byte
	Operations []Operation
	// Typed counts the operations with an Op.
	Typed int
}

// Operation is one operation as the reference page lists it.
type Operation struct {
	Tag, Method, Path, Summary, ID string
	Access                         Access
	Permission                     string
	Typed                          bool
}

// Security schemes, by name.
const (
	schemeAdminBearer = "adminBearer"
	schemeAdminKey    = "adminApiKey"
	schemeUserBearer  = "userBearer"
	schemeSCIM        = "scimBearer"
	schemeSetupBearer = "setupBearer"
	schemeSetupToken  = "setupToken"
	schemeClientBasic = "clientBasic"
)

// Build makes the document of routes, with ops keyed "METHOD path" as in
// the table. An op for no route is an error: the table is the truth.
func Build(info Info, routes []Route, ops map[string]Op) (*Document, error) {
	s := newSchemas()
	errorRef := s.of(info.APIError, answer)
	paths := map[string]map[string]any{}
	doc := &Document{}
	seen := map[string]bool{}
	ids := map[string]bool{}
	for _, rt := range routes {
		key := rt.Method + " " + rt.Path
		if seen[key] {
			return nil, fmt.Errorf("openapi: route %s twice", key)
		}
		seen[key] = true
		path, vars := templatePath(rt.Path)
		op, typed := ops[key]
		id := operationID(rt.Method, rt.Path)
		if strings.HasSuffix(path, "/") && path != "/" {
			id += "_index"
		}
		if ids[id] {
			return nil, fmt.Errorf("openapi: operation id %s twice", id)
		}
		ids[id] = true
		tag := tagOf(path)
		o := map[string]any{
			"operationId": id,
			"tags":        []string{tag},
			"summary":     summary(op, rt),
			"responses":   responses(s, rt, op, typed),
		}
		if d := description(op, rt); d != "" {
			o["description"] = d
		}
		if sec := security(rt); sec != nil {
			o["security"] = sec
		}
		if rt.Permission != "" {
			o["x-permission"] = rt.Permission
		}
		var params []map[string]any
		for _, v := range vars {
			sc := Schema{"type": "string"}
			if v[1] != "" {
				sc["pattern"] = "^" + v[1] + "$"
			}
			params = append(params, map[string]any{"name": v[0], "in": "path", "required": true, "schema": sc})
		}
		for _, q := range op.Query {
			p := map[string]any{"name": q.Name, "in": "query", "schema": q.Schema}
			if q.Description != "" {
				p["description"] = q.Description
			}
			if q.Required {
				p["required"] = true
			}
			params = append(params, p)
		}
		if params != nil {
			o["parameters"] = params
		}
		if body := requestBody(s, op); body != nil {
			o["requestBody"] = body
		}
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(rt.Method)] = o
		doc.Operations = append(doc.Operations, Operation{Tag: tag, Method: rt.Method, Path: path, Summary: summary(op, rt),
			ID: id, Access: rt.Access, Permission: rt.Permission, Typed: typed})
		if typed {
			doc.Typed++
		}
	}
	for key := range ops {
		if !seen[key] {
			return nil, fmt.Errorf("openapi: an operation for %s, which is no documented route", key)
		}
	}
	s.components["OAuthError"] = oauthError
	s.components["SCIMError"] = scimError
	var tags []map[string]any
	var names []string
	for _, o := range doc.Operations {
		if !slices.Contains(names, o.Tag) {
			names = append(names, o.Tag)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		tags = append(tags, map[string]any{"name": n})
	}
	slices.SortStableFunc(doc.Operations, func(a, b Operation) int { return strings.Compare(a.Tag, b.Tag) })
	out := map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": map[string]any{"title": info.Title, "version": info.Version, "description": info.Description,
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"}},
		"tags":  tags,
		"paths": paths,
		"components": map[string]any{
			"schemas":         s.components,
			"responses":       errorResponses(errorRef),
			"securitySchemes": securitySchemes,
		},
	}
	var err error
	if doc.JSON, err = json.MarshalIndent(out, "", "  "); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return doc, nil
}

// YAML is the document as YAML, written when asked: most servers are
// never asked, and writing it costs as much as building the document.
func (d *Document) YAML() ([]byte, error) {
	y, err := toYAML(d.JSON)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return y, nil
}

func summary(op Op, rt Route) string {
	if op.Summary != "" {
		return op.Summary
	}
	return rt.Method + " " + rt.Path
}

// description says who may call the route, then the op's own words.
func description(op Op, rt Route) string {
	var who string
	switch rt.Access {
	case Admin:
		if rt.Permission == "authenticated" {
			who = "Any admin credential."
		} else {
			who = "An admin credential holding `" + rt.Permission + "`."
		}
	case User:
		who = "A realm user's access token."
		if rt.Pages {
			who = "A realm user's access token, or the browser's sign-in session (then the answers are pages)."
		}
	case SCIM:
		who = "A SCIM token of the realm."
	case Setup:
		who = "The setup wizard's bootstrap token, until the wizard is completed or skipped (410 from then on)."
	}
	return strings.TrimSpace(who + "\n\n" + op.Description)
}

func security(rt Route) []map[string][]string {
	switch rt.Access {
	case Admin:
		return []map[string][]string{{schemeAdminBearer: {}}, {schemeAdminKey: {}}}
	case User:
		return []map[string][]string{{schemeUserBearer: {}}}
	case SCIM:
		return []map[string][]string{{schemeSCIM: {}}}
	case Setup:
		return []map[string][]string{{schemeSetupBearer: {}}, {schemeSetupToken: {}}}
	}
	if rt.Errors == OAuthErrors && rt.Method == http.MethodPost {
		// The client authenticates itself with Basic or in the form, or
		// is a public client.
		return []map[string][]string{{}, {schemeClientBasic: {}}}
	}
	return []map[string][]string{}
}

func requestBody(s *schemas, op Op) map[string]any {
	content := map[string]any{}
	if op.Request != nil {
		// The server reads any JSON media type, a merge patch's too.
		sc := map[string]any{"schema": s.of(op.Request, request)}
		types := op.RequestTypes
		if len(types) == 0 {
			types = []string{"application/json", "application/merge-patch+json"}
		}
		for _, mt := range types {
			content[mt] = sc
		}
	}
	if op.Form != nil {
		content["application/x-www-form-urlencoded"] = map[string]any{"schema": op.Form}
	}
	if len(content) == 0 {
		return nil
	}
	return map[string]any{"required": !op.RequestOptional, "content": content}
}

// responses lists the success answer (exact when the route has an Op,
// the 2XX class else), the redirects of pages, and the errors in the
// route's shape.
func responses(s *schemas, rt Route, op Op, typed bool) map[string]any {
	out := map[string]any{}
	mt := op.ResponseType
	if mt == "" {
		mt = "application/json"
	}
	switch {
	case typed:
		status := op.Status
		if status == 0 {
			status = http.StatusOK
		}
		r := map[string]any{"description": http.StatusText(status)}
		if op.Response != nil {
			m := map[string]any{"schema": s.of(op.Response, answer)}
			if op.Example != nil {
				m["example"] = op.Example
			}
			content := map[string]any{mt: m}
			if rt.Pages {
				content["text/html"] = map[string]any{}
			}
			r["content"] = content
		}
		out[strconv.Itoa(status)] = r
		if rt.Pages && status != http.StatusOK {
			// A browser is shown a page where a script gets another
			// status (a 204 after a form's post).
			out["200"] = map[string]any{"description": "A page, to a browser.", "content": map[string]any{"text/html": map[string]any{}}}
		}
	default:
		out["2XX"] = map[string]any{"description": "Success; the body is not described yet."}
	}
	if rt.Pages || rt.Errors == OAuthErrors {
		out["3XX"] = map[string]any{"description": "A redirect (a browser's sign-in, a logout's return)."}
	}
	switch rt.Errors {
	case OAuthErrors:
		out["4XX"] = refResponse("OAuthError")
		out["5XX"] = refResponse("OAuthError")
	case SCIMErrors:
		if rt.Method == http.MethodGet {
			out["304"] = map[string]any{"description": "Not modified: the resource still has the version If-None-Match names (ETags)."}
		}
		out["4XX"] = refResponse("SCIMError")
		out["5XX"] = refResponse("SCIMError")
	default:
		if rt.Pages && rt.Access == User {
			out["401"] = refResponse("ErrorOrPage")
		} else if rt.Access == Admin || rt.Access == User || rt.Access == Setup {
			out["401"] = refResponse("Unauthorized")
		}
		if rt.Access == Admin {
			out["403"] = refResponse("Forbidden")
		}
		if rt.Pages {
			out["4XX"] = refResponse("ErrorOrPage")
			out["5XX"] = refResponse("ErrorOrPage")
		} else {
			out["4XX"] = refResponse("Error")
			out["5XX"] = refResponse("Error")
		}
	}
	for status, body := range op.Also {
		r := map[string]any{"description": http.StatusText(status)}
		if body != nil {
			r["content"] = map[string]any{mt: map[string]any{"schema": s.of(body, answer)}}
		}
		out[strconv.Itoa(status)] = r
	}
	return out
}

func refResponse(name string) map[string]any {
	return map[string]any{"$ref": "#/components/responses/" + name}
}
