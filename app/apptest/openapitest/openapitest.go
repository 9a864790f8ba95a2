// Package openapitest checks, in tests, that the server answers as its
// OpenAPI document says: Handler wraps the server's handler so that every
// request a test makes, and its answer, is validated against the document.
// Only tests import it; the server never pays for it.
package openapitest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	yaml "github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi/datamodel"
)

// checker is one document's validator. Building it reads the whole
// document, so the servers of a test binary share it; the library's
// caches are not made for concurrent requests, so calls take turns.
type checker struct {
	mu sync.Mutex
	v  validator.Validator
}

var (
	checkersMu sync.Mutex
	checkers   = map[[32]byte]*checker{}
)

// Check builds the validator of doc and answers the problems the library
// finds in the document itself.
func Check(doc []byte) ([]string, error) {
	c, err := checkerOf(doc)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, errs := c.v.ValidateDocument()
	return describe(errs), nil
}

func checkerOf(doc []byte) (*checker, error) {
	key := sha256.Sum256(doc)
	checkersMu.Lock()
	defer checkersMu.Unlock()
	if c, ok := checkers[key]; ok {
		return c, nil
	}
	// A component may hold a list of its own kind (a group's subgroups):
	// libopenapi counts a required list of itself as an endless loop,
	// though an empty list ends it.
	d, err := libopenapi.NewDocumentWithConfiguration(doc, &datamodel.DocumentConfiguration{IgnoreArrayCircularReferences: true, IgnorePolymorphicCircularReferences: true})
	if err != nil {
		return nil, fmt.Errorf("openapitest: read the document: %w", err)
	}
	// The credential is the route table's to check (the permission
	// tests); a browser calls the account with its session cookie, which
	// the document leaves out.
	v, errs := validator.NewValidator(d, config.WithoutSecurityValidation())
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapitest: build the validator: %v", errs)
	}
	c := &checker{v: v}
	checkers[key] = c
	return c, nil
}

// DocumentPath is where the server serves its document as JSON.
const DocumentPath = "/admin/openapi.json"

// Served reads the document h serves at DocumentPath, in process.
func Served(h http.Handler) func() ([]byte, error) {
	return func() ([]byte, error) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, DocumentPath, nil))
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("openapitest: GET %s: %d %s", DocumentPath, rec.Code, rec.Body)
		}
		return rec.Body.Bytes(), nil
	}
}

// Handler answers h, reporting to t every request and answer of a
// documented route that the document does not describe: an answer whose
// status, media type or body it does not list, and a request it says is
// invalid that the server nevertheless served (a 2XX). A request to a route
// the document leaves out (pages, the console, unknown paths) passes
// unchecked. doc is read at the first request.
func Handler(t testing.TB, doc func() ([]byte, error), h http.Handler) http.Handler {
	var (
		once sync.Once
		c    *checker
		err  error
		mu   sync.Mutex
		done bool
	)
	t.Cleanup(func() {
		mu.Lock()
		done = true
		mu.Unlock()
	})
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done { // a live server may still answer after the test
			t.Errorf(format, args...)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			var b []byte
			if b, err = doc(); err == nil {
				c, err = checkerOf(b)
			}
		})
		if err != nil {
			report("openapi: %v", err)
			h.ServeHTTP(w, r)
			return
		}
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)

		check := r.Clone(r.Context())
		check.Body = io.NopCloser(bytes.NewReader(body))
		resp := &http.Response{StatusCode: rec.status, Header: w.Header().Clone(),
			Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), Request: check}
		c.mu.Lock()
		_, reqErrs := c.v.ValidateHttpRequestSync(check)
		check.Body = io.NopCloser(bytes.NewReader(body))
		_, respErrs := c.v.ValidateHttpResponse(check, resp)
		c.mu.Unlock()
		if undocumented(reqErrs) || undocumented(respErrs) {
			return
		}
		if len(reqErrs) > 0 && rec.status < 300 {
			report("openapi: %s %s was served (%d), but the document says the request is invalid:\n%s",
				r.Method, r.URL.Path, rec.status, strings.Join(describe(reqErrs), "\n"))
		}
		if len(respErrs) > 0 {
			report("openapi: %s %s answered %d %s, which the document does not describe:\n%s\nbody: %.400s",
				r.Method, r.URL.Path, rec.status, w.Header().Get("Content-Type"), strings.Join(describe(respErrs), "\n"), rec.body.String())
		}
	})
}

// undocumented says the request is for a path or method the document
// leaves out.
func undocumented(errs []*verrors.ValidationError) bool {
	for _, e := range errs {
		if e.IsPathMissingError() || e.IsOperationMissingError() {
			return true
		}
	}
	return false
}

func describe(errs []*verrors.ValidationError) []string {
	var out []string
	for _, e := range errs {
		s := "  " + e.Message
		if e.Reason != "" {
			s += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			s += "\n    " + f.FieldPath + ": " + f.Reason
		}
		out = append(out, s)
	}
	return out
}

// recorder passes an answer through and keeps a copy.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if hj, ok := r.ResponseWriter.(http.Hijacker); ok {
		return hj.Hijack()
	}
	return nil, nil, http.ErrNotSupported
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// JSONOf reads a YAML document and answers it as JSON, for comparing the
// document's two renderings.
func JSONOf(doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("openapitest: read YAML: %w", err)
	}
	return json.Marshal(v)
}
