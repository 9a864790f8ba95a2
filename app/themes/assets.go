package themes

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Asset is an uploaded image as the API shows it; URL is where anyone
// fetches it, and what a theme's logo or favicon takes as its assetId.
type Asset struct {
	ID               string `json:"id"`
	ContentType      string `json:"contentType"`
	Width            int    `json:"width"`
	Height           int    `json:"height"`
	Size             int    `json:"size"`
	SHA256           string `json:"sha256"`
	URL              string `json:"url"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
}

// UploadField is the multipart field an upload sends its file in.
const UploadField = "file"

// Upload stores an image sent as multipart/form-data in the field file:
// checked from its bytes (sniffImage), at most MaxAssetBytes and
// MaxAssetDimension pixels a side. Images are never changed, and kept
// with the realm: a published version may show them.
func (s *Service) Upload(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	data, err := readUpload(r)
	if err != nil {
		return err
	}
	ct, width, height, err := sniffImage(data)
	if err != nil {
		return apperr.Field(UploadField, "%s", err.Error())
	}
	if n, err := s.deps.Store.CountThemeAssets(r.Context(), realm.ID); err != nil {
		return err
	} else if n >= maxAssets {
		return apperr.Invalid("the realm has %d images, the most it may have", maxAssets)
	}
	sum := sha256.Sum256(data)
	a := &store.ThemeAsset{ID: uuid.NewString(), RealmID: realm.ID, ContentType: ct, Width: width, Height: height,
		SHA256: sum[:], Data: data, Size: len(data), CreatedAt: s.deps.Now().UnixMilli()}
	if err := s.deps.Store.CreateThemeAsset(r.Context(), a); err != nil {
		return err
	}
	s.deps.Log.Info("theme image uploaded", "realm", realm.Name, "asset", a.ID, "type", ct, "bytes", len(data))
	rep := Asset{ID: a.ID, ContentType: ct, Width: width, Height: height, Size: len(data), SHA256: hex.EncodeToString(sum[:]),
		URL: s.deps.BaseURL + AssetPath(realm.Name, a.ID), CreatedTimestamp: a.CreatedAt}
	return httpx.Created(w, rep.URL, rep)
}

// readUpload reads the file of a multipart upload, at most MaxAssetBytes.
func readUpload(r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, apperr.New(http.StatusUnsupportedMediaType, apperr.CodeUnsupportedMedia,
			"an upload is multipart/form-data, the image in the field %s", UploadField)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, apperr.Invalid("the multipart body cannot be read: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, apperr.Field(UploadField, "is required: send the image in the multipart field %s", UploadField)
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, err
			}
			return nil, apperr.Invalid("the multipart body cannot be read: %v", err)
		}
		if part.FormName() != UploadField {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, MaxAssetBytes+1))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, err
			}
			return nil, apperr.Invalid("the multipart body cannot be read: %v", err)
		}
		if len(data) > MaxAssetBytes {
			return nil, &apperr.Error{Status: http.StatusRequestEntityTooLarge, Code: apperr.CodePayloadTooLarge, Field: UploadField,
				Message: "the image is larger than 512 KiB, the most an image may be"}
		}
		return data, nil
	}
}

// assetMaxAge is how long browsers and caches keep an image: for ever,
// as an image's ID names its bytes and neither ever changes.
const assetMaxAge = "public, max-age=31536000, immutable"

// ServeAsset answers an image of a realm to anyone (the pages show them;
// a mail's reader fetches its logo): the sniffed type, never sniffed
// again by the browser, with its hash as ETag. An unknown image is a
// plain 404: this route is a static file's, not the API's.
func (s *Service) ServeAsset(w http.ResponseWriter, r *http.Request) {
	realm, err := s.deps.PublicRealm(r)
	var a *store.ThemeAsset
	if err == nil {
		a, err = s.deps.Store.GetThemeAsset(r.Context(), realm.ID, mux.Vars(r)["assetId"])
	}
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound) || apperr.From(err).Status == http.StatusNotFound:
		http.Error(w, "no such image", http.StatusNotFound)
		return
	default:
		s.deps.Log.Error("theme image not read", "path", httpx.LoggedPath(r), "err", err)
		http.Error(w, "the image cannot be read now", http.StatusServiceUnavailable)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", `"`+hex.EncodeToString(a.SHA256)+`"`)
	h.Set("Cache-Control", assetMaxAge)
	http.ServeContent(w, r, "", time.UnixMilli(a.CreatedAt), bytes.NewReader(a.Data))
}
