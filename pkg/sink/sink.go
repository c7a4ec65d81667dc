// Package sink delivers AIBOM documents to the tools people already run: a
// webhook receiving CloudEvents, Dependency-Track, and OCI registries (as
// referrers of the images a workload runs).
//
// The reconciler hands every document it writes (and every AIBOM it
// deletes) to a Dispatcher, which never blocks it: each sink has a bounded
// queue of its own and one worker that delivers with a deadline per
// attempt, retries transient failures with capped exponential backoff for
// at most a maximum elapsed time, and reports every outcome (Reporter), so
// that a document that could not be delivered is recorded in its AIBOM's
// status and delivered again later, also after a restart. Guarantees and
// formats: docs/sinks.md.
package sink

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Op is what happened to a document.
type Op string

const (
	// OpWrite: a document was created or changed.
	OpWrite Op = "write"
	// OpDelete: an AIBOM was deleted (its workload deleted, absorbed, out
	// of scope, or its adapter disabled).
	OpDelete Op = "delete"
)

// MediaType is the media type of a CycloneDX JSON document.
const MediaType = "application/vnd.cyclonedx+json"

// Subject is the workload a document describes.
type Subject struct {
	APIVersion, Kind, Name, UID string
}

// Event is one document write or delete, as handed to every sink.
type Event struct {
	Op Op
	// AIBOM is the AIBOM's namespace and name.
	AIBOM types.NamespacedName
	// Subject is the workload the document describes.
	Subject Subject
	// Document is the CycloneDX JSON document (the full one, also when the
	// AIBOM's status holds a reduced one); empty for a delete.
	Document []byte
	// SHA256 is the hex SHA-256 of Document; for a delete, of the last
	// document the AIBOM held (may be empty).
	SHA256 string
	// Images lists the image digests the workload runs, as
	// "repository@sha256:<hex>" (normalised repository names).
	Images []string
	// Reloadable says that the AIBOM's status.document is this document as
	// is, so that a queue over its byte budget may hold a reference and read
	// it again (Options.Load) when its turn comes.
	Reloadable bool

	// queued is when the event entered its queue (MaxElapsed counts from
	// there).
	queued time.Time
}

// Receipt is what a sink says about a delivered document.
type Receipt struct {
	// Location is where the sink holds the document (a URL, a project, a
	// registry reference); may be empty.
	Location string
}

// Sink is one destination. Deliver must honour ctx's deadline, must be
// idempotent for the same event (deliveries are at least once), and
// reports a failure that retrying cannot fix with Permanent.
type Sink interface {
	// Name is the sink's name in the AIBOMConfig.
	Name() string
	// Deliver sends one event.
	Deliver(ctx context.Context, ev Event) (Receipt, error)
}

// PermanentError is a failure that retrying the same event cannot fix (a
// request the receiver refuses). Reason is a CamelCase word for conditions.
type PermanentError struct {
	Reason string
	Err    error
}

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as not worth retrying.
func Permanent(reason string, err error) error { return &PermanentError{Reason: reason, Err: err} }

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// StatusError is an unexpected HTTP status from a receiver. It carries the
// code only: what a receiver replies never reaches a status or a log.
type StatusError struct {
	Code int
}

func (e *StatusError) Error() string {
	class := "rejected"
	if transientStatus(e.Code) {
		class = "transient"
	}
	return fmt.Sprintf("HTTP %d %s (%s)", e.Code, http.StatusText(e.Code), class)
}

func transientStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooEarly || code == http.StatusTooManyRequests || code >= 500
}

// HTTPStatus classifies an HTTP status: nil for 2xx; a transient error for
// 408, 425, 429 and 5xx; a permanent one for every other status.
func HTTPStatus(code int) error {
	switch {
	case code >= 200 && code < 300:
		return nil
	case transientStatus(code):
		return &StatusError{Code: code}
	default:
		return Permanent("Rejected", &StatusError{Code: code})
	}
}

// reasonOf is the CamelCase reason of a failed delivery.
func reasonOf(err error) string {
	var p *PermanentError
	switch {
	case errors.As(err, &p) && p.Reason != "":
		return p.Reason
	case errors.Is(err, context.DeadlineExceeded):
		return "Timeout"
	}
	var s *StatusError
	if errors.As(err, &s) {
		return fmt.Sprintf("HTTP%d", s.Code)
	}
	return "Unreachable"
}
