package sink

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
)

// CloudEvent types the webhook sink sends.
const (
	EventTypeWritten = "dev.aibom.document.written.v1"
	EventTypeDeleted = "dev.aibom.document.deleted.v1"
)

// DataSchema is the dataschema of a "document written" event: the
// CycloneDX 1.6 JSON schema the document follows.
const DataSchema = "http://cyclonedx.org/schema/bom-1.6.schema.json"

// SignatureHeader carries "sha256=<hex HMAC-SHA256 of the body>" when the
// webhook has a signing key.
const SignatureHeader = "X-Aibom-Signature"

// ContentType is the Content-Type of the webhook's requests (structured
// mode, JSON event format).
const ContentType = "application/cloudevents+json; charset=utf-8"

// Webhook posts each event as a structured-mode CloudEvent (JSON event
// format, content type application/cloudevents+json) to an HTTPS endpoint.
type Webhook struct {
	// SinkName is the sink's name.
	SinkName string
	// URL is the https:// endpoint. It is a secret: only its origin is
	// ever quoted.
	URL string
	// Client sends the requests (NewHTTPClient).
	Client *http.Client
	// BearerToken, when set, is sent as Authorization: Bearer.
	BearerToken string
	// SigningKey, when set, signs the body (SignatureHeader).
	SigningKey []byte
	// Now stamps the events (default time.Now).
	Now func() time.Time
}

// Name implements Sink.
func (w *Webhook) Name() string { return w.SinkName }

func (w *Webhook) scrubber() *Scrubber { return NewScrubber(w.URL) }

// CloudEvent builds the structured-mode CloudEvent of an event with the
// CloudEvents Go SDK's event model, in its JSON event format. Extension
// attributes are lower-case alphanumerics (CloudEvents naming).
//
// A write carries the document in data_base64 with datacontenttype
// application/vnd.cyclonedx+json: the CloudEvents JSON format puts data of
// a non-JSON media type in data_base64, the SDKs decode it to exactly the
// bytes stored (the Go SDK refuses a "+json" type as an inline JSON value),
// and so sha256(data) is the event's id, its aibomsha256 and the AIBOM's
// status.documentSHA256; receivers deduplicate on the id. A delete has no
// data and the id "deleted:<subject uid>:<sha>". docs/sinks.md has the wire
// format.
func CloudEvent(ev Event, now time.Time) ([]byte, error) {
	ce := event.New(event.CloudEventsVersionV1)
	ce.SetSource(fmt.Sprintf("/apis/aibom.dev/v1alpha1/namespaces/%s/aiboms/%s", url.PathEscape(ev.AIBOM.Namespace), url.PathEscape(ev.AIBOM.Name)))
	ce.SetSubject(ev.AIBOM.Namespace + "/" + ev.Subject.Kind + "/" + ev.Subject.Name)
	ce.SetTime(now.UTC())
	for name, v := range map[string]string{"aibomnamespace": ev.AIBOM.Namespace, "aibomkind": ev.Subject.Kind, "aibomname": ev.Subject.Name, "aibomuid": ev.Subject.UID} {
		ce.SetExtension(name, v)
	}
	switch ev.Op {
	case OpWrite:
		sum := sha256.Sum256(ev.Document)
		sha := hex.EncodeToString(sum[:])
		if ev.SHA256 != "" && ev.SHA256 != sha {
			return nil, fmt.Errorf("the document does not hash to its SHA-256 %s", ev.SHA256)
		}
		if len(ev.Document) == 0 {
			return nil, errors.New("a written event without a document")
		}
		ce.SetID(sha)
		ce.SetType(EventTypeWritten)
		ce.SetExtension("aibomsha256", sha)
		ce.SetDataSchema(DataSchema)
		ce.DataBase64 = true
		if err := ce.SetData(MediaType, ev.Document); err != nil {
			return nil, err
		}
	case OpDelete:
		ce.SetID("deleted:" + ev.Subject.UID + ":" + ev.SHA256)
		ce.SetType(EventTypeDeleted)
		if ev.SHA256 != "" {
			ce.SetExtension("aibomsha256", ev.SHA256)
		}
	default:
		return nil, fmt.Errorf("unknown op %q", ev.Op)
	}
	if err := ce.Validate(); err != nil {
		return nil, fmt.Errorf("cloudevent: %w", err)
	}
	return ce.MarshalJSON()
}

// Sign returns the SignatureHeader value of body under key.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Deliver implements Sink.
func (w *Webhook) Deliver(ctx context.Context, ev Event) (Receipt, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	body, err := CloudEvent(ev, now())
	if err != nil {
		return Receipt{}, Permanent("InvalidEvent", err)
	}
	origin := RedactURL(w.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		// The parse error quotes the URL: say only that it is not one.
		return Receipt{}, Permanent("InvalidURL", errors.New("the webhook URL is not a valid URL"))
	}
	req.Header.Set("Content-Type", ContentType)
	if w.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+w.BearerToken)
	}
	if len(w.SigningKey) > 0 {
		req.Header.Set(SignatureHeader, Sign(w.SigningKey, body))
	}
	resp, err := w.Client.Do(req)
	if err != nil {
		return Receipt{}, transportError("POST "+origin, err)
	}
	defer drain(resp)
	if err := readError(resp); err != nil {
		return Receipt{}, fmt.Errorf("POST %s: %w", origin, err)
	}
	return Receipt{Location: origin}, nil
}
