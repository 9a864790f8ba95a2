package saml

import (
	"bytes"
	"maps"
	"net/http"
)

// heldResponse is an answer rendered ahead of the write it reports, held
// until that write has committed: a ResponseWriter that keeps what it is
// given, starting from the headers the real one had.
type heldResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func holdResponse(w http.ResponseWriter) *heldResponse {
	return &heldResponse{header: w.Header().Clone()}
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return h.body.Write(b)
}

// release sends the held answer through w.
func (h *heldResponse) release(w http.ResponseWriter) error {
	dst := w.Header()
	clear(dst)
	maps.Copy(dst, h.header)
	if h.status == 0 {
		h.status = http.StatusOK
	}
	w.WriteHeader(h.status)
	_, err := w.Write(h.body.Bytes())
	return err
}
