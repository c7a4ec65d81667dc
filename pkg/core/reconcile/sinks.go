package reconcile

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// The reconciler hands every document it writes, and every AIBOM it
// deletes, to DocumentSinks (pkg/sink behind it), and keeps in the AIBOM's
// status.sinks the delivery state of the current document per sink: Pending
// when written, then Delivered or Failed as the sinks report. A state other
// than Delivered makes the next reconcile of the workload (an event, the
// periodic re-verification, a restart) offer the document again, so a
// delivery that failed, or that a restart interrupted, is not lost. The
// core knows no sink: only names and states.

// DocumentEvent is a document written, or an AIBOM deleted.
type DocumentEvent struct {
	// Deleted is true for a deleted AIBOM.
	Deleted bool
	// AIBOM is the AIBOM's key.
	AIBOM client.ObjectKey
	// Subject is the workload described.
	Subject v1alpha1.Subject
	// Document is the full CycloneDX JSON document (also when the AIBOM's
	// status holds a reduced one or a reference); nil for a delete.
	Document []byte
	// SHA256 is Document's hex SHA-256 (a delete: the last document's).
	SHA256 string
	// Images lists the image digests the workload runs, as
	// "repository@sha256:<hex>".
	Images []string
	// To names the sinks to deliver to; nil: every sink.
	To []string
	// Reloadable says that the AIBOM's status.document is Document as is
	// (not a reduced one): a sink queue short of memory may read it again
	// from the AIBOM instead of holding it.
	Reloadable bool
}

// DocumentSinks receives the reconciler's documents.
type DocumentSinks interface {
	// Names lists the configured sinks, sorted; none: the reconciler keeps
	// no sink state.
	Names() []string
	// Offer hands an event over. It must never block.
	Offer(DocumentEvent)
}

// sinkDoc is the document handed to the sinks for one reconcile.
type sinkDoc struct {
	doc    []byte
	sha    string
	images []string
	// inline: status.document is doc.
	inline bool
}

func (r *Reconciler) sinkNames() []string {
	if r.Sinks == nil {
		return nil
	}
	return r.Sinks.Names()
}

// undelivered lists the configured sinks that do not hold the AIBOM's
// current document: no state yet (a sink added since), Pending (a restart
// may have lost its queue) or Failed.
func undelivered(names []string, a *v1alpha1.AIBOM) []string {
	if a == nil || a.Status.DocumentSHA256 == "" {
		return nil
	}
	var out []string
	for _, n := range names {
		if !TrustedReceipt(a.UID, findSink(a.Status.Sinks, n)) {
			out = append(out, n)
		}
	}
	return out
}

func findSink(list []v1alpha1.SinkDelivery, name string) *v1alpha1.SinkDelivery {
	for i := range list {
		if list[i].Sink == name {
			return &list[i]
		}
	}
	return nil
}

// prepareSinkDocument returns the document for the sinks: the full one. A
// document reduced to the inline cap is built again without the cap; if a
// sink already holds that full document (existing's status says so), the
// report's status refers to it instead of carrying the reduced body.
func (r *Reconciler) prepareSinkDocument(rep *Report, inputs Inputs, existing *v1alpha1.AIBOM) *sinkDoc {
	names := r.sinkNames()
	if len(names) == 0 || rep.Status.Document == "" || rep.ScrapeErr != nil || rep.BuildErr != nil {
		return nil
	}
	sd := &sinkDoc{doc: []byte(rep.Status.Document), sha: rep.Status.DocumentSHA256, images: imageDigests(inputs), inline: true}
	if rep.Truncated == nil || rep.Truncated.Status != metav1.ConditionTrue {
		return sd
	}
	full := inputs.Input
	full.MaxBytes = 0
	res, err := document.Build(full)
	if err != nil || res.JSON == nil {
		return sd // the reduced document is what there is
	}
	sd.doc, sd.sha, sd.inline = res.JSON, res.SHA256, false
	if ref := heldBySink(existing, names, res.SHA256, len(res.JSON)); ref != nil {
		rep.Status.Document, rep.Status.DocumentSHA256, rep.Status.DocumentSize = "", res.SHA256, len(res.JSON)
		rep.Status.DocumentRef = ref
		rep.Status.Summary = summaryOf(res.Summary)
		rep.Truncated = &metav1.Condition{Type: v1alpha1.ConditionTruncated, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonStoredInSink,
			Message: fmt.Sprintf("the document (%d bytes) exceeds the inline cap of %d bytes; sink %s holds it (status.documentRef)", len(res.JSON), inputs.MaxBytes, ref.Sink)}
	}
	return sd
}

// heldBySink is the reference to a document a configured sink holds, per
// existing's status: its current reference if still valid, else the first
// sink (by name) that delivered it with a location.
func heldBySink(existing *v1alpha1.AIBOM, names []string, sha string, size int) *v1alpha1.DocumentReference {
	if existing == nil {
		return nil
	}
	// Only a reference this process wrote or saw delivered (trustedRef):
	// status.sinks and status.documentRef can be written by anyone with
	// update on aiboms/status.
	if ref := existing.Status.DocumentRef; ref != nil && ref.SHA256 == sha && slices.Contains(names, ref.Sink) && trustedRef(existing.UID, ref) {
		if e := findSink(existing.Status.Sinks, ref.Sink); e != nil && e.State == v1alpha1.DeliveryDelivered && e.DocumentSHA256 == sha {
			return ref.DeepCopy()
		}
	}
	for _, n := range names {
		if e := findSink(existing.Status.Sinks, n); e != nil && e.State == v1alpha1.DeliveryDelivered && e.DocumentSHA256 == sha && e.Location != "" {
			if ref := (&v1alpha1.DocumentReference{Sink: n, Location: e.Location, SHA256: sha, Size: size}); trustedRef(existing.UID, ref) {
				return ref
			}
		}
	}
	return nil
}

// sinkStates returns the status.sinks of a document about to be written:
// the state of each configured sink for that document (kept when it is
// about the same document, Pending otherwise; a Delivered receipt only when
// this process trusts it), in name order.
func sinkStates(uid types.UID, prev []v1alpha1.SinkDelivery, names []string, sha string) []v1alpha1.SinkDelivery {
	out := make([]v1alpha1.SinkDelivery, 0, len(names))
	for _, n := range names {
		if e := findSink(prev, n); e != nil && e.DocumentSHA256 == sha && (e.State != v1alpha1.DeliveryDelivered || TrustedReceipt(uid, e)) {
			out = append(out, *e.DeepCopy())
			continue
		}
		out = append(out, v1alpha1.SinkDelivery{Sink: n, State: v1alpha1.DeliveryPending, DocumentSHA256: sha})
	}
	return out
}

// SinkConditions derives the Synced and SinkFailed conditions from the
// delivery states of the configured sinks.
func SinkConditions(states []v1alpha1.SinkDelivery, names []string) (synced, failed metav1.Condition) {
	synced = metav1.Condition{Type: v1alpha1.ConditionSynced, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonDelivered,
		Message: "every sink holds the current document: " + strings.Join(names, ", ")}
	failed = metav1.Condition{Type: v1alpha1.ConditionSinkFailed, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonDelivered,
		Message: "no sink failed"}
	var waiting, failing []string
	failReason := ""
	for _, n := range names {
		e := findSink(states, n)
		switch {
		case e == nil || (e.State == v1alpha1.DeliveryPending && e.Reason == ""):
			waiting = append(waiting, n)
		case e.State == v1alpha1.DeliveryDelivered:
		default: // Failed, or Pending after a failed attempt
			failing = append(failing, fmt.Sprintf("sink %s: %s (%s): %s", n, e.State, e.Reason, e.Message))
			if failReason == "" {
				failReason = e.Reason
				if e.State == v1alpha1.DeliveryFailed && e.Reason != v1alpha1.ReasonQueueFull {
					failReason = v1alpha1.ReasonDeliveryFailed
				}
				if e.Reason == v1alpha1.ReasonQueueFull {
					failReason = v1alpha1.ReasonQueueFull
				}
			}
		}
	}
	sort.Strings(failing)
	if len(failing) > 0 {
		failed.Status, failed.Reason = metav1.ConditionTrue, failReason
		if failed.Reason == "" {
			failed.Reason = v1alpha1.ReasonDeliveryFailed
		}
		failed.Message = clampMessage(strings.Join(failing, "; "))
		synced.Status, synced.Reason, synced.Message = metav1.ConditionFalse, failed.Reason, failed.Message
		return synced, failed
	}
	if len(waiting) > 0 {
		synced.Status, synced.Reason = metav1.ConditionFalse, v1alpha1.ReasonDeliveryPending
		synced.Message = "delivery pending to: " + strings.Join(waiting, ", ")
	}
	return synced, failed
}

// setSinkStatus fills status.sinks and the sink conditions of a status
// about to be written for sd (nil: the document did not change, states are
// kept). Without sinks both are removed.
func setSinkStatus(status *v1alpha1.AIBOMStatus, uid types.UID, prev []v1alpha1.SinkDelivery, names []string, sd *sinkDoc, generation int64) {
	if len(names) == 0 {
		status.Sinks = nil
		meta.RemoveStatusCondition(&status.Conditions, v1alpha1.ConditionSynced)
		meta.RemoveStatusCondition(&status.Conditions, v1alpha1.ConditionSinkFailed)
		return
	}
	if sd == nil {
		status.Sinks = slices.Clone(prev)
		return
	}
	status.Sinks = sinkStates(uid, prev, names, sd.sha)
	synced, failed := SinkConditions(status.Sinks, names)
	synced.ObservedGeneration, failed.ObservedGeneration = generation, generation
	meta.SetStatusCondition(&status.Conditions, synced)
	meta.SetStatusCondition(&status.Conditions, failed)
}

// offer hands a written document to the sinks that do not hold it.
// A sink holds it only by a receipt this process trusts (TrustedReceipt).
func (r *Reconciler) offer(key client.ObjectKey, uid types.UID, subject v1alpha1.Subject, sd *sinkDoc, states []v1alpha1.SinkDelivery) {
	if r.Sinks == nil || sd == nil {
		return
	}
	var to []string
	for _, n := range r.sinkNames() {
		if e := findSink(states, n); e == nil || e.DocumentSHA256 != sd.sha || !TrustedReceipt(uid, e) {
			to = append(to, n)
		}
	}
	if len(to) == 0 {
		return
	}
	r.Sinks.Offer(DocumentEvent{AIBOM: key, Subject: subject, Document: sd.doc, SHA256: sd.sha, Images: sd.images, To: to, Reloadable: sd.inline})
}

// imageDigests lists the image digests a root's containers run, as
// "repository@digest" with the repository normalised (docker.io/library/…),
// sorted and without repeats.
func imageDigests(in Inputs) []string {
	seen := map[string]bool{}
	for i, c := range in.Findings.Containers {
		if i >= len(in.Digests) {
			break
		}
		named, err := reference.ParseNormalizedNamed(c.Image)
		if err != nil {
			continue
		}
		repo := reference.TrimNamed(named).String()
		d := in.Digests[i]
		digests := []string{d.Digest}
		for _, rd := range d.Running {
			digests = append(digests, rd.Digest)
		}
		for _, dg := range digests {
			if strings.HasPrefix(dg, "sha256:") {
				seen[repo+"@"+dg] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Redeliver enqueues the subject of every AIBOM whose current document a
// configured sink does not hold (see undelivered): their reconcile offers
// the document again. It returns how many it enqueued; on a replica that
// does not lead it does nothing.
func (r *Reconciler) Redeliver(ctx context.Context, names []string) int {
	if len(names) == 0 || !r.leading() || r.Mapper == nil || r.Mapper.Reader == nil {
		return 0
	}
	var aiboms v1alpha1.AIBOMList
	if err := r.Mapper.Reader.List(ctx, &aiboms); err != nil {
		log.FromContext(ctx).Error(err, "redelivery: listing AIBOMs")
		return 0
	}
	n := 0
	for i := range aiboms.Items {
		if a := &aiboms.Items[i]; len(undelivered(names, a)) > 0 {
			r.Mapper.enqueueSubject(a, r.Queue)
			n++
		}
	}
	return n
}
