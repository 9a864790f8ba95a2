package httpx

import "net/http"

// HandlerFunc is a handler that returns its error: it never writes an
// error answer itself, so its route group decides the shape.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Renderer answers a handler's error in its route group's shape: the JSON
// error of the APIs, an OAuth error, an HTML page.
type Renderer func(w http.ResponseWriter, r *http.Request, err error)

// Handle serves h, answering its error with render.
func Handle(h HandlerFunc, render Renderer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			render(w, r, err)
		}
	})
}
