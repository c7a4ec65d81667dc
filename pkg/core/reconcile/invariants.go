package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// Invariants under churn (#29): what the reconciler does so that no AIBOM
// is stale, orphaned, forged or flickering, whatever the order of events and
// however far its AIBOM cache lags.
//
//   - A delete is decided from the API server's truth where the cache can
//     lag: a workload this process last reported as a root (or whose create
//     met an AIBOM the cache did not show) and whose AIBOM the cache does not
//     show is checked with one live GET, then deleted with a UID
//     precondition. A workload that never was a root here costs nothing.
//   - A write that raced with its kind leaving the registry (a profile
//     removed while the reconcile ran) is decided again at once, now as a
//     generic root's (kept as such, or deleted).
//   - The status fields a reader sees (summary, counts, absorbed list,
//     document size and reference) are part of what the controller compares
//     with what it would write: a forged one is repaired by one status patch.
//   - A status.documentRef is trusted only when this process wrote it (or
//     saw a sink deliver that document there): otherwise the document is
//     rewritten inline (and offered to the sinks again).

// rootReported records the workloads whose last decision in this process was
// to report them (or to try to): a later delete of their AIBOM does not
// trust a cache that shows none.
type rootReported struct{ m sync.Map } // Request -> struct{}

func (s *rootReported) mark(req Request)      { s.m.Store(req, struct{}{}) }
func (s *rootReported) clear(req Request)     { s.m.Delete(req) }
func (s *rootReported) take(req Request) bool { _, ok := s.m.LoadAndDelete(req); return ok }

// reportedOutcome reports whether an outcome is a root's (its AIBOM may
// exist after it).
func reportedOutcome(outcome string, err error) bool {
	switch outcome {
	case OutcomeCreated, OutcomeUpdated, OutcomeUnchanged, OutcomeScrapeFailed, OutcomeBuildFailed:
		return true
	}
	return err == errStaleCache
}

// afterReconcile keeps the per-workload invariants once a reconcile decided:
// it records roots, and undoes a write of a kind that left the registry
// while the reconcile ran.
func (r *Reconciler) afterReconcile(ctx context.Context, req Request, trackedAtStart bool, outcome string, err error) error {
	if req.Op != OpReconcile {
		return nil
	}
	if !reportedOutcome(outcome, err) {
		return nil
	}
	r.reported.mark(req)
	if !trackedAtStart || r.Registry.IsTracked(req.GroupKind) || r.Registry.Disabled(req.GroupKind) {
		// Still tracked, or a generic root's reconcile all along.
		return nil
	}
	// Its adapter (a profile) went away while this reconcile ran: what it
	// wrote is decided again, now as a generic root (kept, rewritten as
	// such, or deleted when the object is not the top of its chain), so that
	// no write racing with the removal outlives it.
	r.reported.clear(req)
	log.FromContext(ctx).V(1).Info("kind no longer tracked after the reconcile wrote its AIBOM; deciding it again as a generic root")
	if r.Queue != nil {
		r.Queue.Add(req)
	}
	return nil
}

// liveAIBOM reads an AIBOM from the API server when the cache shows none
// but this process has reason to believe it exists (see rootReported).
// It returns nil when there is none, or no live reader.
func (r *Reconciler) liveAIBOM(ctx context.Context, key client.ObjectKey) (*v1alpha1.AIBOM, error) {
	w, ok := workloadOf(ctx)
	if r.APIReader == nil || !ok || key.Name != AIBOMName(w.GroupKind, w.Name) || !r.reported.take(w) {
		// Only the workload's own AIBOM name (not the legacy name a root
		// with a long name checks on every reconcile).
		return nil, nil
	}
	a := &v1alpha1.AIBOM{}
	if err := r.APIReader.Get(ctx, key, a); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get AIBOM %s from the API server: %w", key, err)
	}
	liveDeleteReads.Inc()
	return a, nil
}

// statusSum is the fingerprint of the status fields the controller decides
// and a reader relies on: the hashes, the document's size and reference,
// the summary (kubectl's Runtime, Model and Confidence columns) and the
// absorbed list and count. Conditions and times are not in it.
func statusSum(st v1alpha1.AIBOMStatus) string {
	// Empty and absent lists are the same status (the API server drops
	// empty lists: omitempty).
	if len(st.Absorbed) == 0 {
		st.Absorbed = nil
	}
	if len(st.Summary.Models) == 0 {
		st.Summary.Models = nil
	}
	data, _ := json.Marshal(struct {
		InputHash, DocumentSHA256 string
		DocumentSize              int
		DocumentRef               *v1alpha1.DocumentReference
		Summary                   v1alpha1.Summary
		Absorbed                  []string
		AbsorbedCount             int
	}{st.InputHash, st.DocumentSHA256, st.DocumentSize, st.DocumentRef, st.Summary, st.Absorbed, st.AbsorbedCount})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// sameReaderFacts reports whether a stored status shows a reader what the
// controller would write, beyond the two hashes: summary, counts, absorbed
// list, size and document reference.
func sameReaderFacts(stored, want v1alpha1.AIBOMStatus) bool {
	stored.Document, want.Document = "", ""
	return statusSum(stored) == statusSum(want)
}

// Trusted document references: a status.documentRef sends readers (and
// "aibom export") to a URL; anyone with update on aiboms/status could point
// it anywhere with the real hash. It is trusted only when this process
// wrote it or saw the sink deliver that document at that location
// (TrustDelivery): the record is kept per AIBOM UID.
var trustedRefs sync.Map // types.UID -> map[string]bool (refKey)

var trustedRefsMu sync.Mutex

func refKey(sink, location, sha string) string {
	return "ref\x00" + sink + "\x00" + location + "\x00" + sha
}

// receiptKey is the record of a delivery receipt (status.sinks[]) this
// process saw: the sink delivered the document with this hash.
func receiptKey(sink, sha string) string { return "receipt\x00" + sink + "\x00" + sha }

// TrustDelivery records that a sink delivered the document with this hash of
// the AIBOM with this UID at location (the sinks' status writer calls it):
// the Delivered receipt is genuine (TrustedReceipt), and so is a
// status.documentRef to that location.
func TrustDelivery(uid types.UID, sink, location, sha string) {
	if uid == "" {
		return
	}
	trustedRefsMu.Lock()
	defer trustedRefsMu.Unlock()
	m := map[string]bool{}
	if v, ok := trustedRefs.Load(uid); ok {
		for k := range v.(map[string]bool) {
			m[k] = true
		}
	}
	m[receiptKey(sink, sha)] = true
	if location != "" {
		m[refKey(sink, location, sha)] = true
	}
	trustedRefs.Store(uid, m)
}

// TrustedReceipt reports whether a Delivered receipt on the AIBOM with this
// UID is one this process saw the sink deliver (TrustDelivery). Anyone with
// update on aiboms/status can write status.sinks: a receipt no delivery of
// this process wrote does not stop the document from being delivered (again:
// after a restart or a failover, every document is offered once more; the
// receivers see the same document hash, a webhook the same event id).
func TrustedReceipt(uid types.UID, e *v1alpha1.SinkDelivery) bool {
	if e == nil || e.State != v1alpha1.DeliveryDelivered || uid == "" {
		return false
	}
	v, ok := trustedRefs.Load(uid)
	return ok && v.(map[string]bool)[receiptKey(e.Sink, e.DocumentSHA256)]
}

// trustedRef reports whether ref, on the AIBOM with this UID, was written or
// seen delivered by this process.
func trustedRef(uid types.UID, ref *v1alpha1.DocumentReference) bool {
	if ref == nil {
		return false
	}
	v, ok := trustedRefs.Load(uid)
	return ok && v.(map[string]bool)[refKey(ref.Sink, ref.Location, ref.SHA256)]
}

func forgetTrustedRefs(uid types.UID) { trustedRefs.Delete(uid) }

// ForgetDeliveries empties the record of deliveries seen (trusted references
// and receipts). The record belongs to one controller process; core.Setup
// calls it, so that a controller started again within a process (as the
// envtests restart one) trusts, like a new process, only what it sees
// delivered itself.
func ForgetDeliveries() { trustedRefs.Clear() }

var (
	liveDeleteReads = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "aibom_live_aibom_reads_total",
		Help: "AIBOMs read from the API server because the cache showed none for a workload last reported as a root (a delete the cache could not decide).",
	})
	invariantRepairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_invariant_repairs_total",
		Help: "AIBOMs repaired or removed by the invariant checks, by what was wrong (orphan_kind, foreign_name, foreign_status, forged_reference).",
	}, []string{"what"})
)

func init() { metrics.Registry.MustRegister(liveDeleteReads, invariantRepairs) }
