package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"net/url"
	"strconv"
	"text/template"

	"github.com/idenplane/idenplane/app/identity"
)

// SecretEnv is the environment variable the snippets of a confidential
// client read its secret from: the secret is never written into them.
const SecretEnv = "IDENPLANE_CLIENT_SECRET"

// SDK is the answer of POST /setup-wizard/sdk-generated: code that signs
// in to the wizard's realm as its client, in JavaScript, Go and Python.
type SDK struct {
	Issuer      string    `json:"issuer"`
	ClientID    string    `json:"clientId"`
	RedirectURI string    `json:"redirectUri"`
	ClientType  string    `json:"clientType"`
	Snippets    []Snippet `json:"snippets"`
}

// Snippet is one language's code.
type Snippet struct {
	Language string `json:"language"` // javascript, go or python
	Library  string `json:"library"`
	Install  string `json:"install"` // the command that fetches the libraries
	Filename string `json:"filename"`
	Code     string `json:"code"`
}

// snippetValues are what a template fills in, each already a literal of
// the template's language (quoted and escaped), so that no value can
// break out of its string.
type snippetValues struct {
	Issuer, ClientID, RedirectURI, CallbackPath, Listen, SecretEnv string
	Public                                                         bool
}

// generateSDK writes the snippets of client c of the realm whose issuer
// is issuer, for its first redirect URI.
func generateSDK(issuer string, c ClientStep) (*SDK, error) {
	if len(c.RedirectURIs) == 0 {
		return nil, fmt.Errorf("client %s has no redirect URI", c.ClientID)
	}
	redirect := c.RedirectURIs[0]
	u, err := url.Parse(redirect)
	if err != nil {
		return nil, fmt.Errorf("redirect URI %q: %w", redirect, err)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	port := u.Port()
	if port == "" {
		port = "8080"
	}
	public := c.ClientType == identity.ClientPublic
	out := &SDK{Issuer: issuer, ClientID: c.ClientID, RedirectURI: redirect, ClientType: c.ClientType}
	for _, l := range snippetLanguages {
		quote := l.quote
		v := snippetValues{Issuer: quote(issuer), ClientID: quote(c.ClientID), RedirectURI: quote(redirect),
			CallbackPath: quote(path), Listen: quote(":" + port), SecretEnv: quote(SecretEnv), Public: public}
		tpl := l.web
		library, install := l.library, l.install
		if public && l.spa != nil {
			tpl, library, install = l.spa, l.spaLibrary, l.spaInstall
		}
		var b bytes.Buffer
		if err := tpl.Execute(&b, v); err != nil {
			return nil, fmt.Errorf("%s snippet: %w", l.name, err)
		}
		code := b.Bytes()
		if l.name == "go" {
			// gofmt's alignment depends on the values: let it do it.
			if code, err = format.Source(code); err != nil {
				return nil, fmt.Errorf("go snippet: %w", err)
			}
		}
		out.Snippets = append(out.Snippets, Snippet{Language: l.name, Library: library, Install: install, Filename: l.filename,
			Code: string(code)})
	}
	return out, nil
}

// jsonQuote is a string literal of JavaScript and of Python alike.
func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

type snippetLanguage struct {
	name, filename, library, install string
	quote                            func(string) string
	web                              *template.Template
	// spa, when set, is the code of a public client in the browser,
	// with its own library.
	spa                    *template.Template
	spaLibrary, spaInstall string
}

var snippetLanguages = []snippetLanguage{
	{name: "javascript", filename: "server.mjs", library: "fetch (Node.js 18+), PKCE", install: "(none: Node.js 18 or later)",
		quote: jsonQuote, web: template.Must(template.New("js").Parse(jsWeb)),
		spa: template.Must(template.New("spa").Parse(jsSPA)), spaLibrary: "oidc-client-ts", spaInstall: "npm install oidc-client-ts"},
	{name: "go", filename: "main.go", library: "golang.org/x/oauth2, github.com/coreos/go-oidc/v3",
		install: "go get golang.org/x/oauth2 github.com/coreos/go-oidc/v3/oidc", quote: strconv.Quote,
		web: template.Must(template.New("go").Parse(goWeb))},
	{name: "python", filename: "app.py", library: "authlib (Flask)", install: "pip install authlib flask requests",
		quote: jsonQuote, web: template.Must(template.New("py").Parse(pyWeb))},
}

// The templates. Each value comes in as a literal of the language.

const jsSPA = `// A single-page app: oidc-client-ts signs in with the authorization
// code flow and PKCE (S256), and keeps the tokens in the browser.
import { UserManager } from "oidc-client-ts";

const userManager = new UserManager({
  authority: {{.Issuer}},
  client_id: {{.ClientID}},
  redirect_uri: {{.RedirectURI}},
  response_type: "code",
  scope: "openid profile email",
});

// Sends the browser to the sign-in.
export function signIn() {
  return userManager.signinRedirect();
}

// Call on the page of the redirect URI: finishes the sign-in.
export async function completeSignIn() {
  const user = await userManager.signinRedirectCallback();
  console.log("signed in as", user.profile.sub);
  return user;
}
`

const jsWeb = `// A web app's server: the authorization code flow with PKCE, over
// fetch. Run with ` + "`node server.mjs`" + `; the secret comes from the
// environment, never from the code.
import { createServer } from "node:http";
import { createHash, randomBytes } from "node:crypto";

const issuer = {{.Issuer}};
const clientId = {{.ClientID}};
const clientSecret = process.env[{{.SecretEnv}}];
const redirectUri = {{.RedirectURI}};
const discovery = await (await fetch(issuer + "/.well-known/openid-configuration")).json();
const pending = new Map(); // state -> PKCE verifier

createServer(async (req, res) => {
  const url = new URL(req.url, redirectUri);
  if (url.pathname === "/login") {
    const state = randomBytes(16).toString("base64url");
    const verifier = randomBytes(32).toString("base64url");
    pending.set(state, verifier);
    const auth = new URL(discovery.authorization_endpoint);
    auth.search = new URLSearchParams({
      response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "openid profile email", state,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"), code_challenge_method: "S256",
    });
    res.writeHead(302, { Location: auth.toString() }).end();
    return;
  }
  if (url.pathname === {{.CallbackPath}}) {
    const verifier = pending.get(url.searchParams.get("state"));
    pending.delete(url.searchParams.get("state"));
    if (!verifier) {
      res.writeHead(400).end("unknown state");
      return;
    }
    const token = await fetch(discovery.token_endpoint, {
      method: "POST",
      headers: { Authorization: "Basic " + Buffer.from(clientId + ":" + clientSecret).toString("base64") },
      body: new URLSearchParams({
        grant_type: "authorization_code", code: url.searchParams.get("code"), redirect_uri: redirectUri, code_verifier: verifier,
      }),
    });
    const tokens = await token.json();
    res.writeHead(token.ok ? 200 : 502, { "Content-Type": "application/json" }).end(JSON.stringify(tokens));
    return;
  }
  res.writeHead(404).end();
}).listen(Number(new URL(redirectUri).port) || 8080);
`

const goWeb = `// Signs in with the authorization code flow and PKCE: x/oauth2 speaks
// OAuth 2.0, go-oidc discovers the realm and verifies the ID token.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
{{- if not .Public}}
	"os"
{{- end}}

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

func main() {
	provider, err := oidc.NewProvider(context.Background(), {{.Issuer}})
	if err != nil {
		log.Fatal(err)
	}
	config := oauth2.Config{
		ClientID: {{.ClientID}},
{{- if not .Public}}
		ClientSecret: os.Getenv({{.SecretEnv}}),
{{- end}}
		Endpoint:    provider.Endpoint(),
		RedirectURL: {{.RedirectURI}},
		Scopes:      []string{oidc.ScopeOpenID, "profile", "email"},
	}
	verifier := provider.Verifier(&oidc.Config{ClientID: config.ClientID})

	http.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		state, pkce := oauth2.GenerateVerifier(), oauth2.GenerateVerifier()
		http.SetCookie(w, &http.Cookie{Name: "state", Value: state, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.SetCookie(w, &http.Cookie{Name: "pkce", Value: pkce, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, config.AuthCodeURL(state, oauth2.S256ChallengeOption(pkce)), http.StatusFound)
	})
	http.HandleFunc({{.CallbackPath}}, func(w http.ResponseWriter, r *http.Request) {
		state, err := r.Cookie("state")
		if err != nil || r.URL.Query().Get("state") != state.Value {
			http.Error(w, "unknown state", http.StatusBadRequest)
			return
		}
		pkce, err := r.Cookie("pkce")
		if err != nil {
			http.Error(w, "no PKCE verifier", http.StatusBadRequest)
			return
		}
		token, err := config.Exchange(r.Context(), r.URL.Query().Get("code"), oauth2.VerifierOption(pkce.Value))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		rawID, _ := token.Extra("id_token").(string)
		idToken, err := verifier.Verify(r.Context(), rawID)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		fmt.Fprintf(w, "signed in as %s\n", idToken.Subject)
	})
	log.Fatal(http.ListenAndServe({{.Listen}}, nil))
}
`

const pyWeb = `# Signs in with the authorization code flow and PKCE: authlib discovers
# the realm, exchanges the code and checks the ID token.
import os

from authlib.integrations.flask_client import OAuth
from flask import Flask, redirect, session

app = Flask(__name__)
app.secret_key = os.environ["FLASK_SECRET_KEY"]
oauth = OAuth(app)
oauth.register(
    "idenplane",
    client_id={{.ClientID}},
{{- if .Public}}
    client_secret=None,
{{- else}}
    client_secret=os.environ[{{.SecretEnv}}],
{{- end}}
    server_metadata_url={{.Issuer}} + "/.well-known/openid-configuration",
    client_kwargs={
        "scope": "openid profile email",
        "code_challenge_method": "S256",
{{- if .Public}}
        "token_endpoint_auth_method": "none",
{{- end}}
    },
)


@app.route("/login")
def login():
    return oauth.idenplane.authorize_redirect({{.RedirectURI}})


@app.route({{.CallbackPath}})
def callback():
    token = oauth.idenplane.authorize_access_token()
    session["user"] = token["userinfo"]
    return redirect("/")
`
