package auditstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Format is the body an HTTP destination takes.
type Format string

// The formats.
const (
	// FormatJSON posts a JSON array of records.
	FormatJSON Format = "json"
	// FormatSplunk posts Splunk HEC events, one JSON object a record,
	// with Authorization: Splunk <token>.
	FormatSplunk Format = "splunk"
	// FormatElastic posts Elasticsearch's _bulk NDJSON: an index action
	// line, then the record, for each; the event ID is the document ID,
	// so a batch sent again after a failure makes no duplicates.
	FormatElastic Format = "elastic"
)

const (
	maxURLLength    = 2048
	maxSecretLength = 4096
	// maxAnswer bounds what is read of an answer: an Elastic bulk answer
	// lists every item.
	maxAnswer = 8 << 20
	// splunkSource is the source of the HEC events.
	splunkSource = "idenplane"
)

// indexName is what an Elastic index or Splunk index or sourcetype may be:
// lower-case for Elastic's sake, and nothing that needs escaping anywhere.
var indexName = regexp.MustCompile(`^[a-z0-9][a-z0-9._:-]{0,254}$`)

// HTTPSettings are an HTTP destination's. Token and Authorization are
// secrets: sealed at rest, and answered as Redacted.
type HTTPSettings struct {
	URL    string `json:"url"`
	Format Format `json:"format,omitempty"` // absent: json
	// Index is Elastic's index (required) or Splunk's (optional).
	Index string `json:"index,omitempty"`
	// SourceType is Splunk's sourcetype; absent: _json.
	SourceType string `json:"sourceType,omitempty"`
	// Token is the Splunk HEC token.
	Token *string `json:"token,omitempty"`
	// Authorization is the Authorization header of the json and elastic
	// formats ("Bearer …", "ApiKey …", "Basic …"); absent: none.
	Authorization *string `json:"authorization,omitempty"`
}

// Redacted stands in answers for a secret that is set; sent back in a
// PUT, it keeps the secret.
const Redacted = "**********"

// checkHTTP checks in and fills in its defaults; it answers the stream's
// secret: the one given, or keep when none is (a PUT keeping it) and the
// format is still prevFormat: a Splunk token must not become another
// format's Authorization header.
func (s *Service) checkHTTP(ctx context.Context, in *HTTPSettings, keep string, prevFormat Format) (secret string, err error) {
	if err := httpx.CheckEndpointURL(ctx, "http.url", in.URL, maxURLLength, s.deps.OutboundAllowed); err != nil {
		return "", err
	}
	if in.Format == "" {
		in.Format = FormatJSON
	}
	if in.Format != prevFormat {
		keep = ""
	}
	given := func(p *string) bool { return p != nil && *p != Redacted }
	switch in.Format {
	case FormatJSON, FormatElastic:
		if in.Token != nil {
			return "", apperr.Field("http.token", "is for the splunk format: give the json and elastic formats an authorization")
		}
		if in.Format == FormatElastic && !indexName.MatchString(in.Index) {
			return "", apperr.Field("http.index", "is required for the elastic format: a lower-case index name")
		}
		if in.Format == FormatJSON && in.Index != "" {
			return "", apperr.Field("http.index", "is for the splunk and elastic formats")
		}
		if in.SourceType != "" {
			return "", apperr.Field("http.sourceType", "is for the splunk format")
		}
		secret = keep
		if given(in.Authorization) {
			secret = *in.Authorization
		}
		if err := checkSecret("http.authorization", secret); err != nil {
			return "", err
		}
	case FormatSplunk:
		if in.Authorization != nil {
			return "", apperr.Field("http.authorization", "is not for the splunk format: give it a token")
		}
		if in.Index != "" && !indexName.MatchString(in.Index) {
			return "", apperr.Field("http.index", "must be a lower-case index name")
		}
		if in.SourceType != "" && !indexName.MatchString(in.SourceType) {
			return "", apperr.Field("http.sourceType", "must be a lower-case sourcetype name")
		}
		secret = keep
		if given(in.Token) {
			secret = *in.Token
		}
		if secret == "" {
			return "", apperr.Field("http.token", "is required for the splunk format: the HEC token")
		}
		if err := checkSecret("http.token", secret); err != nil {
			return "", err
		}
	default:
		return "", apperr.Field("http.format", "must be json, splunk or elastic")
	}
	return secret, nil
}

// checkSecret refuses what cannot be a header value.
func checkSecret(field, v string) error {
	if len(v) > maxSecretLength {
		return apperr.Field(field, "is longer than %d characters", maxSecretLength)
	}
	for _, r := range v {
		if r < 32 || r > 126 {
			return apperr.Field(field, "must be printable ASCII: it is sent as a header")
		}
	}
	return nil
}

// redactHTTP hides the secret in settings about to be answered or stored.
func redactHTTP(set *HTTPSettings, secret string) {
	set.Token, set.Authorization = nil, nil
	if secret == "" {
		return
	}
	r := Redacted
	if set.Format == FormatSplunk {
		set.Token = &r
	} else {
		set.Authorization = &r
	}
}

// httpSink posts batches.
type httpSink struct {
	set    HTTPSettings
	secret string
	client *http.Client
	host   string
}

func (d *httpSink) send(ctx context.Context, recs []*store.AuditRecord) error {
	body, contentType := d.body(recs)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.set.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "idenplane-audit-streams")
	switch {
	case d.set.Format == FormatSplunk:
		req.Header.Set("Authorization", "Splunk "+d.secret)
	case d.secret != "":
		req.Header.Set("Authorization", d.secret)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("no answer in time")
		}
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if d.set.Format == FormatElastic {
		// _bulk answers 200 when some items failed, and says so.
		var bulk struct {
			Errors bool `json:"errors"`
		}
		if err := json.Unmarshal(answer, &bulk); err != nil {
			return fmt.Errorf("the _bulk answer is not JSON: %w", err)
		}
		if bulk.Errors {
			return errors.New("the _bulk answer reports items that failed")
		}
	}
	return nil
}

// body is the batch in the destination's format, and its content type.
func (d *httpSink) body(recs []*store.AuditRecord) ([]byte, string) {
	var b bytes.Buffer
	switch d.set.Format {
	case FormatSplunk:
		sourceType := d.set.SourceType
		if sourceType == "" {
			sourceType = "_json"
		}
		for _, r := range recs {
			b.WriteString(`{"time":`)
			b.WriteString(strconv.FormatFloat(float64(r.CreatedAt)/1000, 'f', 3, 64))
			b.WriteString(`,"host":`)
			b.Write(jsonString(d.host))
			b.WriteString(`,"source":`)
			b.Write(jsonString(splunkSource))
			b.WriteString(`,"sourcetype":`)
			b.Write(jsonString(sourceType))
			if d.set.Index != "" {
				b.WriteString(`,"index":`)
				b.Write(jsonString(d.set.Index))
			}
			b.WriteString(`,"event":`)
			b.Write(recordJSON(r))
			b.WriteString("}\n")
		}
		return b.Bytes(), "application/json"
	case FormatElastic:
		for _, r := range recs {
			action, _ := json.Marshal(map[string]map[string]string{"index": {"_index": d.set.Index, "_id": r.EventID}})
			b.Write(action)
			b.WriteByte('\n')
			b.Write(recordJSON(r))
			b.WriteByte('\n')
		}
		return b.Bytes(), "application/x-ndjson"
	}
	b.WriteByte('[')
	for i, r := range recs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(recordJSON(r))
	}
	b.WriteByte(']')
	return b.Bytes(), "application/json"
}

func jsonString(v string) []byte {
	b, _ := json.Marshal(v)
	return b
}
