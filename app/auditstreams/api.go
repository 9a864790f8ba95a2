package auditstreams

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxEvents            = 50
	maxDescriptionLength = 255
)

// Input is the body of a create and of a PUT: the type, and the settings
// of that type's destination.
type Input struct {
	Type        Type            `json:"type"`
	Events      []string        `json:"events"`  // absent: every event, ["*"]
	Enabled     *bool           `json:"enabled"` // absent: true
	Description string          `json:"description"`
	Syslog      *SyslogSettings `json:"syslog"`
	HTTP        *HTTPSettings   `json:"http"`
	File        *FileSettings   `json:"file"`
}

// Rep is a stream as the admin API shows it: its settings with the secret
// Redacted, and how far it has gone through its realm's records.
type Rep struct {
	ID          string          `json:"id"`
	Type        Type            `json:"type"`
	Events      []string        `json:"events"`
	Enabled     bool            `json:"enabled"`
	Description string          `json:"description"`
	Syslog      *SyslogSettings `json:"syslog,omitempty"`
	HTTP        *HTTPSettings   `json:"http,omitempty"`
	File        *FileSettings   `json:"file,omitempty"`
	// LastDeliveredSequence is the last record the stream has passed:
	// every one up to it was taken by the destination, or is of a type
	// the stream does not take.
	LastDeliveredSequence int64 `json:"lastDeliveredSequence"`
	// Lag counts the realm's records after it: those still to pass.
	Lag                    int64  `json:"lag"`
	LastError              string `json:"lastError,omitempty"`
	LastErrorTimestamp     int64  `json:"lastErrorTimestamp,omitempty"`
	LastDeliveredTimestamp int64  `json:"lastDeliveredTimestamp,omitempty"`
	// NextAttemptTimestamp is when a failing stream is tried again.
	NextAttemptTimestamp int64 `json:"nextAttemptTimestamp,omitempty"`
	CreatedTimestamp     int64 `json:"createdTimestamp"`
	UpdatedTimestamp     int64 `json:"updatedTimestamp"`
}

// rep shows a with its cursor c (nil: none yet) and its realm's last
// sequence.
func rep(a *store.AuditStream, c *store.AuditCursor, last int64) (Rep, error) {
	r := Rep{ID: a.ID, Type: Type(a.Type), Events: a.Events, Enabled: a.Enabled, Description: a.Description,
		CreatedTimestamp: a.CreatedAt, UpdatedTimestamp: a.UpdatedAt}
	var err error
	switch r.Type {
	case TypeSyslog:
		r.Syslog = &SyslogSettings{}
		err = json.Unmarshal(a.Settings, r.Syslog)
	case TypeHTTP:
		r.HTTP = &HTTPSettings{}
		if err = json.Unmarshal(a.Settings, r.HTTP); err == nil {
			redactHTTP(r.HTTP, a.Secret)
		}
	case TypeFile:
		r.File = &FileSettings{}
		err = json.Unmarshal(a.Settings, r.File)
	}
	if err != nil {
		return r, err
	}
	if c != nil {
		r.LastDeliveredSequence, r.Lag = c.DeliveredSeq, max(last-c.DeliveredSeq, 0)
		r.LastError, r.LastErrorTimestamp, r.LastDeliveredTimestamp = c.LastError, c.LastErrorAt, c.DeliveredAt
		if c.Failures > 0 {
			r.NextAttemptTimestamp = c.NextAttemptAt
		}
	}
	return r, nil
}

func checkEvents(events []string) error {
	if len(events) > maxEvents {
		return apperr.Field("events", "holds more than %d entries", maxEvents)
	}
	for _, e := range events {
		if !bus.ValidPattern(e) {
			return apperr.Field("events", "%q is not an event type or a group of them (docs/events.md)", e)
		}
	}
	return nil
}

// input reads and checks the body of a create or a PUT into a, whose
// secret it keeps when the body gives none; a is new when its ID is "".
func (s *Service) input(r *http.Request, a *store.AuditStream) error {
	var in Input
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	ctx := r.Context()
	switch {
	case in.Type == "":
		return apperr.Field("type", "is required: syslog, http or file")
	case in.Type != TypeSyslog && in.Type != TypeHTTP && in.Type != TypeFile:
		return apperr.Field("type", "must be syslog, http or file")
	case a.Type != "" && Type(a.Type) != in.Type:
		return apperr.Field("type", "cannot change: create another stream")
	}
	// The settings of the type, and no other's.
	given := map[Type]bool{TypeSyslog: in.Syslog != nil, TypeHTTP: in.HTTP != nil, TypeFile: in.File != nil}
	for _, t := range []Type{TypeSyslog, TypeHTTP, TypeFile} {
		if given[t] && t != in.Type {
			return apperr.Field(string(t), "is for streams of type %s", t)
		}
	}
	if !given[in.Type] {
		return apperr.Field(string(in.Type), "is required for a stream of type %s", in.Type)
	}
	if in.Events == nil {
		in.Events = []string{"*"}
	}
	if len(in.Events) == 0 {
		return apperr.Field("events", "must hold at least one event type or pattern; absent, it takes every event")
	}
	if err := checkEvents(in.Events); err != nil {
		return err
	}
	if in.Description != "" {
		if err := validate.DisplayName("description", in.Description, maxDescriptionLength); err != nil {
			return err
		}
	}
	var settings any
	secret := ""
	switch in.Type {
	case TypeSyslog:
		if err := s.checkSyslog(ctx, in.Syslog); err != nil {
			return err
		}
		settings = in.Syslog
	case TypeHTTP:
		var prev HTTPSettings
		if a.Settings != nil {
			if err := json.Unmarshal(a.Settings, &prev); err != nil {
				return err
			}
		}
		var err error
		if secret, err = s.checkHTTP(ctx, in.HTTP, a.Secret, prev.Format); err != nil {
			return err
		}
		in.HTTP.Token, in.HTTP.Authorization = nil, nil // the secret is sealed apart
		settings = in.HTTP
	case TypeFile:
		if err := s.checkFile(ctx, in.File, a.ID); err != nil {
			return err
		}
		settings = in.File
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return err
	}
	enabled := in.Enabled == nil || *in.Enabled
	a.Type, a.Events, a.Description, a.Settings, a.Secret, a.Enabled = string(in.Type), in.Events, in.Description, raw, secret, enabled
	return nil
}

// Create registers a stream; it takes the realm's events from now on.
func (s *Service) Create(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	a := &store.AuditStream{RealmID: realm.ID}
	if err := s.input(r, a); err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	a.ID, a.CreatedAt, a.UpdatedAt = uuid.NewString(), now, now
	if err := s.deps.Store.CreateAuditStream(r.Context(), a); err != nil {
		return err
	}
	out, err := s.show(r.Context(), a)
	if err != nil {
		return err
	}
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+a.ID, out)
}

// show is a's Rep with its cursor as stored.
func (s *Service) show(ctx context.Context, a *store.AuditStream) (Rep, error) {
	c, err := s.deps.Store.AuditCursor(ctx, a.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Rep{}, err
	}
	last, err := s.deps.Store.AuditSequence(ctx, a.RealmID)
	if err != nil {
		return Rep{}, err
	}
	return rep(a, c, last)
}

// List lists the realm's streams.
func (s *Service) List(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	streams, err := s.deps.Store.ListAuditStreams(ctx, realm.ID)
	if err != nil {
		return err
	}
	cursors, err := s.deps.Store.AuditCursors(ctx, realm.ID)
	if err != nil {
		return err
	}
	last, err := s.deps.Store.AuditSequence(ctx, realm.ID)
	if err != nil {
		return err
	}
	out := make([]Rep, len(streams))
	for i, a := range streams {
		if out[i], err = rep(a, cursors[a.ID], last); err != nil {
			return err
		}
	}
	return httpx.OK(w, out)
}

// stream is the stream the path names, or a 404.
func (s *Service) stream(r *http.Request) (*store.AuditStream, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, err
	}
	id := mux.Vars(r)["id"]
	if uuid.Validate(id) != nil {
		return nil, apperr.NotFound("audit stream")
	}
	a, err := s.deps.Store.GetAuditStream(r.Context(), realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.NotFound("audit stream")
	}
	return a, err
}

// Get answers one stream with its cursor, lag and last error.
func (s *Service) Get(w http.ResponseWriter, r *http.Request) error {
	a, err := s.stream(r)
	if err != nil {
		return err
	}
	out, err := s.show(r.Context(), a)
	if err != nil {
		return err
	}
	return httpx.OK(w, out)
}

// Put replaces a stream's events, state, description and settings; its
// type stays, and so does its secret unless the body gives another. A
// stream enabled again starts at the realm's last record, as a new one
// does.
func (s *Service) Put(w http.ResponseWriter, r *http.Request) error {
	a, err := s.stream(r)
	if err != nil {
		return err
	}
	wasEnabled := a.Enabled
	if err := s.input(r, a); err != nil {
		return err
	}
	a.UpdatedAt = s.deps.Now().UnixMilli()
	if err := s.deps.Store.UpdateAuditStream(r.Context(), a, a.Enabled && !wasEnabled); err != nil {
		return err
	}
	s.Wake()
	out, err := s.show(r.Context(), a)
	if err != nil {
		return err
	}
	return httpx.OK(w, out)
}

// Delete deletes a stream with its cursor; the records only it held back
// go with the worker's next purge.
func (s *Service) Delete(w http.ResponseWriter, r *http.Request) error {
	a, err := s.stream(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteAuditStream(r.Context(), a.RealmID, a.ID); err != nil {
		return err
	}
	s.Purge(r.Context())
	return httpx.NoContent(w)
}
