package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idenplane/idenplane/app/httpx"
)

// recorder is the response writer of an in-process call: it keeps the
// status, headers and body the API wrote.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.body.Write(b)
}

func (rec *recorder) result() int {
	if rec.status == 0 {
		return http.StatusOK
	}
	return rec.status
}

// apiError is an answer of the API that refused a call, in the APIs'
// error shape (httpx.ErrorBody).
type apiError struct {
	Status int
	httpx.ErrorBody
}

func (e *apiError) Error() string {
	return fmt.Sprintf("admin API: %d %s: %s", e.Status, e.ErrorBody.Error, e.Description)
}

// fieldErrors are a refusal's messages by field (the API's field names,
// which are the forms' input names), every one of them.
func (e *apiError) fieldErrors() map[string]string {
	out := map[string]string{}
	add := func(field, msg string) {
		if field == "" {
			return
		}
		// redirectUris[2] and config.host are messages of their input.
		if i := strings.IndexAny(field, "[."); i > 0 {
			field = field[:i]
		}
		if _, ok := out[field]; !ok {
			out[field] = msg
		}
	}
	add(e.Field, e.Description)
	for _, f := range e.Errors {
		add(f.Field, f.Description)
	}
	return out
}

// forward copies what the API records of the caller from the browser's
// request: its address, for the events and the throttles, and its
// language.
func forward(from, to *http.Request) {
	to.RemoteAddr = from.RemoteAddr
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip", "User-Agent", "Accept-Language"} {
		if v := from.Header.Get(h); v != "" {
			to.Header.Set(h, v)
		}
	}
}

// serve sends one request to the API in process and returns what it
// recorded.
func (s *Service) serve(ctx context.Context, from *http.Request, method, path, contentType string, body io.Reader, token string) (*recorder, error) {
	req, err := s.apiRequest(ctx, from, method, path, contentType, body, token)
	if err != nil {
		return nil, err
	}
	rec := newRecorder()
	s.deps.API.ServeHTTP(rec, req)
	return rec, nil
}

// apiRequest is one request to the API in process.
func (s *Service) apiRequest(ctx context.Context, from *http.Request, method, path, contentType string, body io.Reader, token string) (*http.Request, error) {
	// The router serves the paths at the root: a base address's own path
	// is a proxy's, stripped before the server sees a request.
	req, err := http.NewRequestWithContext(ctx, method, s.origin+path, body)
	if err != nil {
		return nil, err
	}
	forward(from, req)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}

// call makes one admin API call with the session's access token: in is
// sent as JSON (nil for none), a success is decoded into out (nil to
// ignore it), and a refusal is an *apiError.
func (s *Service) call(r *http.Request, sess *session, method, path string, in, out any) error {
	var body io.Reader
	contentType := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, contentType = bytes.NewReader(b), "application/json"
	}
	rec, err := s.serve(r.Context(), r, method, path, contentType, body, sess.AccessToken)
	if err != nil {
		return err
	}
	return decodeAnswer(rec, out)
}

func decodeAnswer(rec *recorder, out any) error {
	status := rec.result()
	if status >= 300 {
		e := &apiError{Status: status}
		if err := json.Unmarshal(rec.body.Bytes(), &e.ErrorBody); err != nil || e.ErrorBody.Error == "" {
			e.ErrorBody = httpx.ErrorBody{Error: "unexpected_answer", Description: http.StatusText(status)}
		}
		return e
	}
	if out == nil || status == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return fmt.Errorf("admin API answer: %w", err)
	}
	return nil
}

// tokenResponse is the system realm's token endpoint's answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
}

// protocol posts a form to one of the system realm's OpenID Connect
// endpoints, in process.
func (s *Service) protocol(r *http.Request, endpoint string, form url.Values) (*recorder, error) {
	path := "/realms/" + url.PathEscape(s.deps.SystemRealm) + "/protocol/openid-connect/" + endpoint
	return s.serve(r.Context(), r, http.MethodPost, path, "application/x-www-form-urlencoded",
		strings.NewReader(form.Encode()), "")
}

// token asks the token endpoint for tokens.
func (s *Service) token(r *http.Request, form url.Values) (*tokenResponse, error) {
	form.Set("client_id", s.deps.ClientID)
	rec, err := s.protocol(r, "token", form)
	if err != nil {
		return nil, err
	}
	var tr tokenResponse
	if err := json.Unmarshal(rec.body.Bytes(), &tr); err != nil {
		return nil, fmt.Errorf("token endpoint answer %d: %w", rec.result(), err)
	}
	if rec.result() != http.StatusOK || tr.AccessToken == "" {
		return nil, fmt.Errorf("token endpoint: %d %s: %s", rec.result(), tr.Error, tr.Description)
	}
	return &tr, nil
}
