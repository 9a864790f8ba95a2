package openapi

import (
	"bytes"
	"fmt"
	"html/template"
)

// pageTemplate is the reference page: the operations by tag, each with who
// may call it, linking to the document. Plain HTML, no script; its one
// stylesheet is the server's own.
var pageTemplate = template.Must(template.New("reference").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} API reference</title>
{{if .Stylesheet}}<link rel="stylesheet" href="{{.Stylesheet}}">{{end}}
</head>
<body>
<main>
<h1>{{.Title}} API reference</h1>
<p>Version {{.Version}}. The OpenAPI 3.1 document: <a href="{{.JSONPath}}">JSON</a>, <a href="{{.YAMLPath}}">YAML</a>.
{{.Typed}} of {{.Total}} operations have their bodies described.</p>
<nav aria-label="Areas"><ul>{{range .Groups}}<li><a href="#tag-{{.Tag}}">{{.Tag}}</a></li>{{end}}</ul></nav>
{{range .Groups}}
<section id="tag-{{.Tag}}" aria-labelledby="h-{{.Tag}}">
<h2 id="h-{{.Tag}}">{{.Tag}}</h2>
<table>
<thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Summary</th><th scope="col">Access</th></tr></thead>
<tbody>
{{range .Operations}}<tr id="{{.ID}}"><td><code>{{.Method}}</code></td><td><code>{{.Path}}</code></td><td>{{.Summary}}</td><td>{{.Access}}{{if .Permission}} <code>{{.Permission}}</code>{{end}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}
</main>
</body>
</html>
`))

// PageInfo is what the reference page needs beyond the document.
type PageInfo struct {
	Title, Version     string
	JSONPath, YAMLPath string
	// Stylesheet is the address of the server's stylesheet, if any.
	Stylesheet string
}

type pageGroup struct {
	Tag        string
	Operations []Operation
}

// Page renders the reference page of d.
func (d *Document) Page(info PageInfo) ([]byte, error) {
	var groups []pageGroup
	for _, o := range d.Operations {
		if len(groups) == 0 || groups[len(groups)-1].Tag != o.Tag {
			groups = append(groups, pageGroup{Tag: o.Tag})
		}
		g := &groups[len(groups)-1]
		g.Operations = append(g.Operations, o)
	}
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, struct {
		PageInfo
		Groups       []pageGroup
		Typed, Total int
	}{info, groups, d.Typed, len(d.Operations)})
	if err != nil {
		return nil, fmt.Errorf("openapi: reference page: %w", err)
	}
	return b.Bytes(), nil
}
