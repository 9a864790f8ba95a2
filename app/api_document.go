package app

import (
	"net/http"
	"sync"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/openapi"
)

// The OpenAPI document of the APIs, built from the route table and the
// routes' schemas (api_schemas.go) the first time it is asked for. It is
// public, as Keycloak's and Zitadel's are: it describes the API every
// installation has, and nothing of this one's realms.
const (
	pathOpenAPI     = "/admin/openapi"
	pathOpenAPIJSON = pathOpenAPI + ".json"
	pathOpenAPIYAML = pathOpenAPI + ".yaml"
)

// apiDocument builds the document once, from the route table of a built
// router, and serves it.
type apiDocument struct {
	table      []route
	version    string
	stylesheet string // the address of the pages' stylesheet

	once sync.Once
	doc  *openapi.Document
	err  error
}

func (d *apiDocument) document() (*openapi.Document, error) {
	d.once.Do(func() {
		d.doc, d.err = openapi.Build(openapi.Info{
			Title:   "Idenplane",
			Version: d.version,
			Description: "The admin API, the account and registration APIs, SCIM and the OpenID Connect endpoints. " +
				"Every admin operation names the permission it asks (x-permission).",
			APIError: httpx.ErrorBody{},
		}, documentedRoutes(d.table), apiSchemas())
	})
	return d.doc, d.err
}

// documentedRoutes are the routes of the table the document describes:
// every one but the browser's (pages, SAML bindings, static files, the
// console).
func documentedRoutes(table []route) []openapi.Route {
	var out []openapi.Route
	for _, rt := range table {
		if rt.format == formatBrowser {
			continue
		}
		r := openapi.Route{Method: rt.method, Path: rt.path, Errors: openapi.APIErrors}
		switch rt.access.kind {
		case accessAdmin:
			r.Access, r.Permission = openapi.Admin, string(rt.access.perm)
		case accessUser:
			r.Access = openapi.User
		case accessSCIM:
			r.Access = openapi.SCIM
		case accessSetup:
			r.Access = openapi.Setup
		default:
			r.Access = openapi.Public
		}
		switch rt.format {
		case formatEither:
			r.Pages = true
		case formatOAuth:
			r.Errors = openapi.OAuthErrors
		case formatSCIM:
			r.Errors = openapi.SCIMErrors
		}
		out = append(out, r)
	}
	return out
}

func (d *apiDocument) serveJSON(w http.ResponseWriter, r *http.Request) error {
	doc, err := d.document()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc.JSON)
	return nil
}

func (d *apiDocument) serveYAML(w http.ResponseWriter, r *http.Request) error {
	doc, err := d.document()
	if err != nil {
		return err
	}
	y, err := doc.YAML()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(y)
	return nil
}

// servePage is the reference page: the operations by area, plain HTML with
// the server's stylesheet and no script.
func (d *apiDocument) servePage(w http.ResponseWriter, r *http.Request) error {
	doc, err := d.document()
	if err != nil {
		return err
	}
	page, err := doc.Page(openapi.PageInfo{Title: "Idenplane", Version: d.version,
		JSONPath: pathOpenAPIJSON, YAMLPath: pathOpenAPIYAML, Stylesheet: d.stylesheet})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	_, _ = w.Write(page)
	return nil
}
