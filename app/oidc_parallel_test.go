package app

import (
	"sync"
	"testing"

	"golang.org/x/oauth2"
)

// Fifty exchanges of one code at once give one set of tokens, and fifty
// refreshes of one refresh token at once one new token: the writes that
// decide (a code used once, a token rotated once) hold under concurrent
// requests, on each backend (TestOnPostgres runs this on PostgreSQL).
func TestParallelCodeAndRefresh(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	const n = 50
	once := func(what string, try func() (*oauth2.Token, error)) *oauth2.Token {
		t.Helper()
		toks, errs := make([]*oauth2.Token, n), make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { toks[i], errs[i] = try() })
		}
		wg.Wait()
		var won *oauth2.Token
		for i := range n {
			if errs[i] != nil {
				codeflowMustRetrieveError(t, errs[i], "invalid_grant")
				continue
			}
			if won != nil {
				t.Fatalf("%d %s at once: more than one succeeded", n, what)
			}
			won = toks[i]
		}
		if won == nil {
			t.Fatalf("%d %s at once: none succeeded", n, what)
		}
		return won
	}

	code := e.signIn(e.browser(), cfg.AuthCodeURL("s"), "alice").Get("code")
	once("exchanges of one code", func() (*oauth2.Token, error) { return cfg.Exchange(t.Context(), code) })

	code = e.signIn(e.browser(), cfg.AuthCodeURL("s"), "alice").Get("code")
	tok, err := cfg.Exchange(t.Context(), code)
	if err != nil {
		t.Fatal(err)
	}
	once("refreshes of one token", func() (*oauth2.Token, error) {
		return cfg.TokenSource(t.Context(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	})
}
