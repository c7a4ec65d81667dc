package sink

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"
)

// CloudEvent types the webhook sink sends.
const (
	EventTypeWritten = "dev.aibom.document.written.v1"
	EventTypeDeleted = "dev.aibom.document.deleted.v1"
)

// SignatureHeader carries "sha256=<hex HMAC-SHA256 of the body>" when the
// webhook has a signing key.
const SignatureHeader = "X-Aibom-Signature"

// Webhook posts each event as a structured-mode CloudEvent (JSON, content
// type application/cloudevents+json) to an HTTPS endpoint.
type Webhook struct {
	// SinkName is the sink's name.
	SinkName string
	// URL is the https:// endpoint.
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

// CloudEvent builds the structured-mode CloudEvent of an event. The id is
// the document's SHA-256 for a write (receivers deduplicate on it: a
// redelivery carries the same id) and "deleted:<subject uid>:<sha>" for a
// delete.
func CloudEvent(ev Event, now time.Time) ([]byte, error) {
	ce := cloudevents.New()
	ce.SetSpecVersion(cloudevents.CloudEventsVersionV1)
	ce.SetSource(fmt.Sprintf("/apis/aibom.dev/v1alpha1/namespaces/%s/aiboms/%s", url.PathEscape(ev.AIBOM.Namespace), url.PathEscape(ev.AIBOM.Name)))
	ce.SetSubject(ev.AIBOM.Namespace + "/" + ev.Subject.Kind + "/" + ev.Subject.Name)
	ce.SetTime(now.UTC())
	ce.SetExtension("aibomnamespace", ev.AIBOM.Namespace)
	ce.SetExtension("aibomkind", ev.Subject.Kind)
	ce.SetExtension("aibomname", ev.Subject.Name)
	ce.SetExtension("aibomuid", ev.Subject.UID)
	if ev.SHA256 != "" {
		ce.SetExtension("aibomsha256", ev.SHA256)
	}
	switch ev.Op {
	case OpWrite:
		ce.SetID(ev.SHA256)
		ce.SetType(EventTypeWritten)
		if err := ce.SetData(MediaType, json.RawMessage(ev.Document)); err != nil {
			return nil, err
		}
	case OpDelete:
		ce.SetID("deleted:" + ev.Subject.UID + ":" + ev.SHA256)
		ce.SetType(EventTypeDeleted)
	default:
		return nil, fmt.Errorf("unknown op %q", ev.Op)
	}
	if err := ce.Validate(); err != nil {
		return nil, err
	}
	out, err := json.Marshal(ce)
	if err != nil || ev.Op != OpWrite {
		return out, err
	}
	// The CloudEvents JSON format embeds data as a JSON value when the
	// content type is JSON, "+json" suffixes included; the SDK does so only
	// for application/json and text/json, and would quote the document as a
	// string: put it in as the JSON it is.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(out, &fields); err != nil {
		return nil, err
	}
	fields["data"] = json.RawMessage(ev.Document)
	return json.Marshal(fields)
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return Receipt{}, Permanent("InvalidURL", err)
	}
	req.Header.Set("Content-Type", "application/cloudevents+json; charset=utf-8")
	if w.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+w.BearerToken)
	}
	if len(w.SigningKey) > 0 {
		req.Header.Set(SignatureHeader, Sign(w.SigningKey, body))
	}
	resp, err := w.Client.Do(req)
	if err != nil {
		return Receipt{}, transportError("POST "+redactURL(w.URL), err)
	}
	defer drain(resp)
	if err := readError(resp); err != nil {
		return Receipt{}, err
	}
	return Receipt{Location: redactURL(w.URL)}, nil
}

// redactURL drops user information and the query (either may hold a
// credential) from a URL that is quoted in a status or log.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
