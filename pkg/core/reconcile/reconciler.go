package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Request names one tracked workload to reconcile (Op OpReconcile), or asks
// a worker to map an event to the workloads it concerns (the other ops, see
// EventMapper.Process).
type Request struct {
	schema.GroupKind
	Namespace string
	Name      string
	// Op is what the worker does; the zero value reconciles the workload.
	Op MapOp
	// UID identifies the object of a mapping request.
	UID types.UID
	// Level counts the OpRootOf levels climbed from the event (bounded).
	Level uint16
}

func (r Request) String() string {
	if r.Op == OpReconcile {
		return r.GroupKind.String() + " " + r.Namespace + "/" + r.Name
	}
	return r.Op.String() + " " + r.GroupKind.String() + " " + r.Namespace + "/" + r.Name
}

// Reconciler turns a tracked workload into its AIBOM, or removes the AIBOM
// when the workload is absorbed, deleted or its namespace opted out.
type Reconciler struct {
	Registry *graph.Registry
	// Store reads registered kinds (normally the informer cache).
	Store graph.Store
	// Kinds tells whether a kind is being removed from the cluster (its CRD
	// deleted); may be nil.
	Kinds interface {
		Removing(ctx context.Context, e graph.Entry) bool
	}
	// Reader reads namespaces and AIBOMs (normally the informer cache).
	Reader client.Reader
	// APIReader reads AIBOMs from the API server, for the deletes the cache
	// cannot decide (invariants.go); may be nil.
	APIReader client.Reader
	// Writer writes AIBOMs.
	Writer client.Client
	// Recorder emits Kubernetes Events; may be nil.
	Recorder events.EventRecorder
	// Tool names the controller in documents.
	Tool document.Tool
	// MaxDocumentBytes is the inline cap of a document; 0 means no cap.
	// Settings, when set, overrides it (and the namespace selector) at run
	// time.
	MaxDocumentBytes int
	// Settings are the run-time settings (Reconfigurer); may be nil.
	Settings *Settings
	// Sinks receives the documents written and the AIBOMs deleted; may be
	// nil.
	Sinks DocumentSinks
	// ReportAll reports every root. When false (the default, --report=ai),
	// a root with no AI signal (Inputs.Unmatched) gets no AIBOM, and an
	// existing one is deleted; an unmatched workload a tracked owner
	// absorbs is still rolled up and listed.
	ReportAll bool
	// Now returns the current time (for status timestamps only).
	Now func() time.Time
	// ScrapeRetry is how soon a workload whose scrape failed is tried again
	// (default 30s).
	ScrapeRetry time.Duration
	// Mapper resolves the event mapping requests (ops other than
	// OpReconcile) into Queue; may be nil when no such request is sent.
	Mapper *EventMapper
	// Queue receives what Mapper maps to.
	Queue interface{ Add(Request) }

	// undecided counts, per workload, the consecutive reconciles whose walk
	// met a kind not synced yet (the retry backoff).
	undecided sync.Map // Request -> int

	// References records the referenced objects each root used (see
	// references.go); may be nil.
	References *ReferenceIndex

	missLogged sync.Map // "<kind>/<reason>" -> true: one log line per kind per process
	// written records what this process wrote to each AIBOM (writes.go), so
	// that a reconcile running on a cache that has not yet seen our own write
	// neither writes the same status again nor skips a delete.
	written writeLog
	// reported records the workloads last reported as roots (invariants.go).
	reported rootReported
	// ForeignGrace is how long the sweep keeps an AIBOM the controller did
	// not write whose subject does not exist (DefaultForeignGrace when 0).
	ForeignGrace time.Duration
	// DanglingGrace is how long a workload whose controller owner is gone
	// while the reference remains waits for the garbage collector before it
	// is decided a root (dangling.go); 0: no wait.
	DanglingGrace time.Duration
	// dangling holds the workloads waiting out DanglingGrace.
	dangling danglingSince
}

// errStaleCache marks a write refused because the cache lagged behind the
// API server (an AIBOM created meanwhile): the workload is retried shortly,
// without an error.
var errStaleCache = errors.New("cache behind the API server")

// Walker returns the upward walk over the reconciler's store.
func (r *Reconciler) Walker() graph.Walker { return graph.Walker{Registry: r.Registry, Store: r.Store} }

// Closure returns the descendant closure over the reconciler's store.
func (r *Reconciler) Closure() graph.Closure {
	return graph.Closure{Registry: r.Registry, Store: r.Store}
}

// Reconcile implements ctrlreconcile.TypedReconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req Request) (ctrlreconcile.Result, error) {
	if req.Op == OpAIBOM {
		after, err := r.checkForeign(ctx, req)
		eventMappings.WithLabelValues(req.Op.String()).Inc()
		return ctrlreconcile.Result{RequeueAfter: after}, err
	}
	if req.Op != OpReconcile {
		if r.Mapper != nil && r.Queue != nil {
			r.Mapper.Process(ctx, req, r.Queue)
		}
		eventMappings.WithLabelValues(req.Op.String()).Inc()
		return ctrlreconcile.Result{}, nil
	}
	logger := log.FromContext(ctx).WithValues("kind", req.GroupKind.String(), "namespace", req.Namespace, "name", req.Name)
	ctx = log.IntoContext(ctx, logger)
	tracked := r.Registry.IsTracked(req.GroupKind)
	outcome, err := r.reconcileWorkload(withWorkload(ctx, req), req)
	if derr := r.afterReconcile(ctx, req, tracked, outcome, err); derr != nil && err == nil {
		err = derr
	}
	if forgetsReferences(outcome) {
		r.References.Forget(req)
	}
	if outcome == OutcomeOwnerNotSynced {
		reconcileOutcomes.WithLabelValues(req.GroupKind.String(), outcome).Inc()
		return ctrlreconcile.Result{RequeueAfter: r.undecidedBackoff(req)}, nil
	}
	r.undecided.Delete(req)
	var wait errWaitDangling
	if errors.As(err, &wait) {
		reconcileOutcomes.WithLabelValues(req.GroupKind.String(), outcome).Inc()
		logger.V(1).Info("controller owner gone; deciding again after the grace", "after", wait.after)
		return ctrlreconcile.Result{RequeueAfter: wait.after}, nil
	}
	if errors.Is(err, errStaleCache) {
		logger.V(1).Info("cache behind the API server; retrying shortly")
		return ctrlreconcile.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	reconcileOutcomes.WithLabelValues(req.GroupKind.String(), outcome).Inc()
	if err != nil {
		logger.Error(err, "reconcile failed", "outcome", outcome)
		return ctrlreconcile.Result{}, err
	}
	logger.V(1).Info("reconciled", "outcome", outcome)
	if outcome == OutcomeScrapeFailed {
		// An adapter can fail for a while (a plugin restarting): try again
		// without waiting for the workload to change.
		return ctrlreconcile.Result{RequeueAfter: r.scrapeRetry()}, nil
	}
	return ctrlreconcile.Result{}, nil
}

func (r *Reconciler) reconcileWorkload(ctx context.Context, req Request) (string, error) {
	outcome, err := r.reconcileWorkloadAt(ctx, req)
	if legacy, ok := LegacyAIBOMName(req.GroupKind, req.Name); ok && err == nil {
		// Written (or deleted) under the current name: an AIBOM an earlier
		// release wrote under the shorter-hash name goes, if it describes
		// this workload (a foreign one is left alone).
		// Sinks are not told: the document lives on under the new name.
		if derr := r.removeAIBOM(ctx, client.ObjectKey{Namespace: req.Namespace, Name: legacy}, "renamed to "+AIBOMName(req.GroupKind, req.Name), false); derr != nil {
			return outcome, derr
		}
	}
	return outcome, err
}

func (r *Reconciler) reconcileWorkloadAt(ctx context.Context, req Request) (string, error) {
	entry, ok := r.Registry.Lookup(req.GroupKind)
	if !ok && r.Registry.Disabled(req.GroupKind) {
		// Its adapter was turned off while running: as after a restart
		// without it, the kind has no AIBOMs.
		return OutcomeAdapterDisabled, r.deleteAIBOM(ctx, client.ObjectKey{Namespace: req.Namespace, Name: AIBOMName(req.GroupKind, req.Name)}, "adapter disabled")
	}
	if _, referenced := r.Registry.Referenced(req.GroupKind); referenced {
		return OutcomeError, ctrlreconcile.TerminalError(fmt.Errorf("kind %s is a referenced kind, never a root", req.GroupKind))
	}
	if !ok || !entry.Tracked() {
		// A kind no adapter tracks: a generic root, if it is the top of
		// its chain.
		return r.reconcileGeneric(ctx, req, entry, ok)
	}
	aibomKey := client.ObjectKey{Namespace: req.Namespace, Name: AIBOMName(req.GroupKind, req.Name)}

	optedIn, err := r.namespaceOptedIn(ctx, req.Namespace)
	if err != nil {
		return OutcomeError, err
	}
	if !optedIn {
		return OutcomeNotOptedIn, r.deleteAIBOM(ctx, aibomKey, "namespace not opted in")
	}

	obj, err := r.Store.Get(ctx, entry, req.Namespace, req.Name)
	if apierrors.IsNotFound(err) {
		if r.Kinds != nil && r.Kinds.Removing(ctx, entry) {
			log.FromContext(ctx).Info("workload gone with its kind's CustomResourceDefinition; AIBOM kept")
			return OutcomeKindUnavailable, nil
		}
		r.forgetReach(req)
		return OutcomeDeleted, r.deleteAIBOM(ctx, aibomKey, "workload deleted")
	}
	if errors.Is(err, graph.ErrKindNotReady) {
		// Its informer enqueues every object once it syncs; meanwhile the
		// AIBOM, if any, is kept.
		return OutcomeKindUnavailable, nil
	}
	if err != nil {
		return OutcomeError, fmt.Errorf("get %s: %w", req, err)
	}

	walk := r.Walker().TrackedOwner(ctx, obj)
	if walk.Reason == graph.ReasonNotSynced {
		// Tracked is what is registered, not what is synced: an owner kind
		// that cannot be read yet may well absorb this workload. Neither
		// report it nor remove its AIBOM; try again.
		log.FromContext(ctx).V(1).Info("owner kind not synced yet; not deciding", "ownerKind", walk.MissKind)
		return OutcomeOwnerNotSynced, nil
	}
	walk, wait := r.settleDangling(ctx, req.GroupKind, obj, walk)
	if wait > 0 {
		// The garbage collector is about to delete or orphan it: neither
		// report it nor remove its AIBOM yet.
		return OutcomeOwnerGone, errWaitDangling{after: wait}
	}
	if walk.Owner != nil {
		if walk.Owner.Generic && r.Queue != nil {
			// Its generic root may have no event of its own (unread, or
			// read live): it is reconciled with what it absorbs.
			r.Queue.Add(Request{GroupKind: walk.Owner.GroupKind, Namespace: walk.Owner.Namespace, Name: walk.Owner.Name, UID: types.UID(walk.Owner.UID)})
		}
		log.FromContext(ctx).V(1).Info("rolled up into owner", "generic", walk.Owner.Generic, "owner", walk.Owner.GroupKind.String()+"/"+walk.Owner.Name, "hops", walk.Hops)
		r.forgetReach(req)
		return OutcomeRolledUp, r.deleteAIBOM(ctx, aibomKey, "rolled up into "+walk.Owner.GroupKind.Kind+"/"+walk.Owner.Name)
	}
	r.countMiss(ctx, walk)

	desc, err := r.Closure().Descendants(ctx, obj)
	if err != nil {
		return OutcomeError, err
	}
	r.countClosureMisses(ctx, desc)
	r.reportUnfitPods(ctx, obj, desc)
	if r.Mapper != nil {
		// Live-read objects raise no events: remember what this root
		// reached, so that their disappearance re-evaluates it.
		r.Mapper.Roots.rememberReach(req, desc.Live)
	}
	return r.report(r.withResolver(ctx, req.Namespace), entry, obj.(*unstructured.Unstructured), desc, aibomKey)
}

// report scrapes the root, builds its document and writes the AIBOM when the
// inputs changed.
func (r *Reconciler) report(ctx context.Context, entry graph.Entry, obj *unstructured.Unstructured, desc graph.Descendants, key client.ObjectKey) (string, error) {
	existing := &v1alpha1.AIBOM{}
	if err := r.Reader.Get(ctx, key, existing); apierrors.IsNotFound(err) {
		existing = nil
	} else if err != nil {
		return OutcomeError, fmt.Errorf("get AIBOM %s: %w", key, err)
	}

	// The fast path compares the inputs' hash before any document is built.
	inputs := GatherInputs(ctx, entry, obj, desc, r.Tool, r.maxDocumentBytes())
	if generic, unread := genericRootOf(ctx); generic {
		inputs.Subject.Generic, inputs.Subject.Unread = true, unread
		inputs.Hash = inputs.hash()
	}
	r.fillFromBelow(ctx, &inputs, desc)
	r.References.Set(Request{GroupKind: entry.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}, inputs.Referenced)
	if !r.ReportAll && inputs.Unmatched() {
		// No AI signal: no AIBOM. An existing one (the workload changed, or
		// every root was reported before) is deleted; deleteAIBOM costs no
		// request when there is none.
		return OutcomeUnmatched, r.deleteAIBOM(ctx, key, "no AI signal (unmatched)")
	}
	sameSubject := existing != nil && existing.Spec.Subject.UID == string(obj.GetUID())
	// Sinks that do not hold the current document get it again, even when
	// nothing is to be written.
	var redeliver []string
	if sameSubject {
		if rec, ok := r.written.load(key); !ok || !rec.lagging(existing) {
			redeliver = undelivered(r.sinkNames(), existing)
		}
	}
	if sameSubject {
		rec, ok := r.written.load(key)
		// Our last write, seen by the cache or not yet: nothing to write.
		if ok && rec.inputHash == inputs.Hash && (rec.matches(existing) || rec.lagging(existing)) && len(redeliver) == 0 {
			return unchangedOutcome(inputs.ScrapeErr), nil
		}
		if inputs.ScrapeErr != nil && existing.Status.InputHash == inputs.Hash {
			// Still failing the same way: nothing to write, but the
			// failure is counted and retried (an adapter plugin may
			// come back).
			return OutcomeScrapeFailed, nil
		}
	}
	if existing == nil {
		if rec, ok := r.written.load(key); ok && rec.uid != "" {
			// Created by this process, not in the cache yet: no second
			// create (it would only fail).
			if rec.inputHash == inputs.Hash {
				return unchangedOutcome(inputs.ScrapeErr), nil
			}
			return OutcomeError, errStaleCache
		}
	}
	rep := inputs.Build()
	sd := r.prepareSinkDocument(&rep, inputs, existing)
	if sameSubject && existing.Status.InputHash == inputs.Hash &&
		(rep.ScrapeErr != nil || rep.BuildErr != nil || (existing.Status.DocumentSHA256 == rep.Status.DocumentSHA256 && sameReaderFacts(existing.Status, rep.Status))) {
		// Not written by this process (or changed behind its back) but
		// what it would write: verified, nothing to write. A stored
		// document that differs (forged, or its hash) is rewritten below.
		r.written.store(key, writeRecord{uid: existing.UID, inputHash: existing.Status.InputHash, docSHA: existing.Status.DocumentSHA256, statusSum: statusSum(existing.Status)})
		if len(redeliver) > 0 {
			r.offer(key, existing.UID, existing.Spec.Subject, sd, existing.Status.Sinks)
		}
		switch {
		case rep.ScrapeErr != nil:
			return OutcomeScrapeFailed, nil
		case rep.BuildErr != nil:
			return OutcomeBuildFailed, nil
		}
		return OutcomeUnchanged, nil
	}
	status, ready, truncated := rep.Status, rep.Ready, rep.Truncated
	if sameSubject && existing.Status.InputHash == inputs.Hash {
		// Same inputs, another stored document: not ours (forged, or its
		// hash): repaired below.
		log.FromContext(ctx).Info("stored document is not what the controller wrote; rewriting it",
			"aibom", key.Name, "storedDocumentSHA256", existing.Status.DocumentSHA256, "documentSHA256", rep.Status.DocumentSHA256)
	}
	outcome := OutcomeUpdated
	switch {
	case rep.ScrapeErr != nil:
		outcome = OutcomeScrapeFailed
		keepLastDocument(&status, existing)
		ready.Message = clampMessage(ready.Message)
		r.warn(obj, v1alpha1.ReasonScrapeFailed, "Scrape", fmt.Sprintf("adapter %s could not read the workload: %v", entry.Adapter.Name(), rep.ScrapeErr))
	case rep.BuildErr != nil:
		// A document that cannot be built faithfully, or that exceeds the
		// inline cap even with every component dropped, is never written:
		// the last good document stays, and the status says why.
		outcome = OutcomeBuildFailed
		keepLastDocument(&status, existing)
		truncated = nil
		ready.Message = clampMessage(ready.Message)
		r.warn(obj, v1alpha1.ReasonBuildFailed, "Build", fmt.Sprintf("the document could not be built: %v", rep.BuildErr))
	}
	return r.write(ctx, entry, obj, existing, key, status, ready, truncated, outcome, sd)
}

// keepLastDocument carries the last good document of existing (if any) into
// status, for a reconcile that could not build a new one. existing comes from
// the manager's cache, which holds AIBOMs without status.document
// (TransformAIBOM): the document copied here is then empty on both sides of
// the status merge patch, which leaves it out and the API server keeps the
// stored one. So the status must only ever be written as a merge patch
// against the cached object, never with Status().Update, which would erase
// the document.
func keepLastDocument(status *v1alpha1.AIBOMStatus, existing *v1alpha1.AIBOM) {
	status.Document, status.DocumentSHA256, status.DocumentSize, status.Summary, status.LastChanged = "", "", 0, v1alpha1.Summary{}, nil
	status.DocumentRef = nil
	if existing != nil {
		status.Document, status.DocumentSHA256, status.DocumentSize = existing.Status.Document, existing.Status.DocumentSHA256, existing.Status.DocumentSize
		status.DocumentRef = existing.Status.DocumentRef
		status.Summary, status.LastChanged = existing.Status.Summary, existing.Status.LastChanged
	}
}

// maxMessage bounds the messages the controller writes into conditions and
// Events: an events.k8s.io note may hold at most 1024 characters, and an
// adapter's error (a plugin's above all) may be arbitrarily long.
const maxMessage = 1000

// clampMessage redacts secrets from a message that quotes an adapter's or
// the builder's error (an adapter may quote a value it could not read), and
// cuts it to maxMessage bytes on a rune boundary.
func clampMessage(s string) string {
	s, _ = podtemplate.Redact(s)
	if len(s) <= maxMessage {
		return s
	}
	const ellipsis = "…"
	cut := maxMessage - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// warn emits a Warning Event regarding the workload, if a recorder is set.
func (r *Reconciler) warn(obj client.Object, reason, action, message string) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, reason, action, "%s", clampMessage(message))
}

func (r *Reconciler) write(ctx context.Context, entry graph.Entry, obj *unstructured.Unstructured, existing *v1alpha1.AIBOM, key client.ObjectKey,
	status v1alpha1.AIBOMStatus, ready metav1.Condition, truncated *metav1.Condition, outcome string, sd *sinkDoc) (string, error) {
	now := metav1.NewTime(r.now())
	aibom := existing
	var behind []string // resourceVersions before the status patch lands
	if aibom == nil {
		if outcome == OutcomeUpdated {
			outcome = OutcomeCreated
		}
		aibom = &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		setSubject(aibom, entry, obj)
		r.written.sending(key, pendingWrite{create: true})
		done := ExpectWrite(key)
		if err := r.Writer.Create(ctx, aibom); apierrors.IsAlreadyExists(err) {
			done("", nil)
			r.written.sent(key)
			return OutcomeError, errStaleCache
		} else if err != nil {
			done("", nil)
			r.written.sent(key)
			return OutcomeError, fmt.Errorf("create AIBOM %s: %w", key, err)
		}
		// What the create stored, for its echo (echo.go).
		done("", aibom.DeepCopy())
		// Known from now on, whatever the cache says: a delete must not
		// skip it.
		r.written.store(key, writeRecord{uid: aibom.UID})
	} else {
		aibom = existing.DeepCopy()
		behind = append(behind, existing.ResourceVersion)
		if foreign := foreignSubject(existing, entry, obj); foreign != "" {
			// An AIBOM under the name this workload's AIBOM has, which this
			// controller did not write for it (made by hand, or by someone
			// else): taken over and rewritten, and the workload's Events say
			// so.
			r.warn(obj, ReasonAIBOMTakenOver, "TakeOver", fmt.Sprintf("AIBOM %s %s; it is rewritten for this workload", key.Name, foreign))
		}
		if aibom.Spec.Subject.UID != string(obj.GetUID()) || existing.Labels[ManagedByLabel] != ManagedBy {
			// The workload was re-created under the same name (or the
			// AIBOM was not ours): re-point the AIBOM at the object.
			setSubject(aibom, entry, obj)
			if err := r.Writer.Update(ctx, aibom); err != nil {
				return OutcomeError, fmt.Errorf("update AIBOM %s: %w", key, err)
			}
			behind = append(behind, aibom.ResourceVersion)
			// The response carries the stored document; the status below
			// was built against the cached AIBOM, which has none (see
			// keepLastDocument): keep the patch's base the same, or a
			// kept document would be patched to null.
			aibom.Status.Document = existing.Status.Document
		}
	}
	// A copy: setting a condition in place would change the patch's base
	// too, and the change would never be written.
	status.Conditions = slices.Clone(aibom.Status.Conditions)
	if status.DocumentSHA256 != aibom.Status.DocumentSHA256 || status.LastChanged == nil {
		status.LastChanged = &now
	}
	status.ObservedGeneration, ready.ObservedGeneration = aibom.Generation, aibom.Generation
	meta.SetStatusCondition(&status.Conditions, ready)
	if truncated != nil {
		truncated.ObservedGeneration = aibom.Generation
		meta.SetStatusCondition(&status.Conditions, *truncated)
	}
	setSinkStatus(&status, aibom.UID, aibom.Status.Sinks, r.sinkNames(), sd, aibom.Generation)
	// A merge patch without a resourceVersion precondition: the controller
	// is the only writer of the status, and a reconcile on a lagging cache
	// must not fail on a conflict with our own previous write.
	base := aibom.DeepCopy()
	if existing == nil {
		behind = append(behind, aibom.ResourceVersion)
	}
	aibom.Status = status
	rec := writeRecord{uid: aibom.UID, inputHash: status.InputHash, docSHA: status.DocumentSHA256, statusSum: statusSum(status), behind: behind}
	r.written.sending(key, pendingWrite{create: existing == nil, status: &rec})
	defer r.written.sent(key)
	if err := r.patchStatus(ctx, key, base, aibom); err != nil {
		return OutcomeError, fmt.Errorf("write AIBOM status %s: %w", key, err)
	}
	r.written.store(key, rec)
	r.offer(key, aibom.UID, aibom.Spec.Subject, sd, status.Sinks)
	log.FromContext(ctx).Info("AIBOM written", "aibom", key.Name, "outcome", outcome, "absorbed", len(status.Absorbed), "sha256", status.DocumentSHA256)
	return outcome, nil
}

// patchStatus writes the status of aibom as a merge patch from base, and
// reads the answer for its metadata only (as the metadata client asks for
// it): the API server does not encode the stored document back, and the
// controller does not decode it; nothing after the write reads the answer.
func (r *Reconciler) patchStatus(ctx context.Context, key client.ObjectKey, base, aibom *v1alpha1.AIBOM) error {
	data, err := statusMergePatch(base, aibom)
	if err != nil {
		return err
	}
	answer := &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("AIBOM"))
	answer.SetNamespace(key.Namespace)
	answer.SetName(key.Name)
	done := ExpectWrite(key)
	if err := r.Writer.Status().Patch(ctx, answer, client.RawPatch(types.MergePatchType, data)); err != nil {
		done("", nil)
		return err
	}
	done(base.ResourceVersion, patchedAIBOM(answer, base, aibom))
	return nil
}

// patchedAIBOM is what a status merge patch from base to aibom stored, as
// its answer's metadata says, for the patch's echo (echo.go): base is the
// stored object at its resourceVersion but for the document the cache does
// not hold, so the stored status is aibom's whenever the patch carried the
// document. A patch without a document (one kept by reference, or none)
// may leave a stored document the controller does not hold: nil, the echo
// is read.
func patchedAIBOM(answer *metav1.PartialObjectMetadata, base, aibom *v1alpha1.AIBOM) *v1alpha1.AIBOM {
	if aibom.Status.Document == "" {
		return nil
	}
	return &v1alpha1.AIBOM{TypeMeta: aibomTypeMeta(), ObjectMeta: answer.ObjectMeta, Spec: base.Spec, Status: *aibom.Status.DeepCopy()}
}

// statusMergePatch is the JSON merge patch from base to aibom
// (client.MergeFrom's), computed with status.document out of the diff and
// set afterwards when it changed: the document is most of an AIBOM's bytes,
// and a diff would encode it twice and decode it twice again to find that
// it changed. When only the status differs (every status write: the base is
// the AIBOM with its old status), only the statuses are encoded and diffed,
// not the metadata (managed fields included) and spec on both sides.
func statusMergePatch(base, aibom *v1alpha1.AIBOM) ([]byte, error) {
	b, a := *base, *aibom
	b.Status.Document, a.Status.Document = "", ""
	var data []byte
	var err error
	if reflect.DeepEqual(b.TypeMeta, a.TypeMeta) && reflect.DeepEqual(b.ObjectMeta, a.ObjectMeta) && reflect.DeepEqual(b.Spec, a.Spec) {
		if base.Status.Document == "" && reflect.ValueOf(&b.Status).Elem().IsZero() {
			// A first status (the base is a create's answer): the diff
			// against nothing is the whole status, encoded once.
			return json.Marshal(struct {
				Status *v1alpha1.AIBOMStatus `json:"status"`
			}{&aibom.Status})
		}
		data, err = statusOnlyMergePatch(&b.Status, &a.Status)
	} else {
		data, err = client.MergeFrom(&b).Data(&a)
	}
	if err != nil || base.Status.Document == aibom.Status.Document {
		return data, err
	}
	// The rest of the patch is kept byte for byte; the document is encoded
	// once, into the status object.
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, err
	}
	doc := []byte("null") // removed
	if aibom.Status.Document != "" {
		if doc, err = json.Marshal(aibom.Status.Document); err != nil {
			return nil, err
		}
	}
	rest := []byte("{}")
	if raw, ok := patch["status"]; ok {
		if rest = bytes.TrimSpace(raw); len(rest) < 2 || rest[0] != '{' {
			return nil, fmt.Errorf("status patch of %s/%s: the status is not a JSON object", aibom.Namespace, aibom.Name)
		}
	}
	var out bytes.Buffer
	out.Grow(len(data) + len(doc) + 32)
	out.WriteByte('{')
	for _, k := range slices.Sorted(maps.Keys(patch)) {
		if k == "status" {
			continue
		}
		key, _ := json.Marshal(k)
		out.Write(key)
		out.WriteByte(':')
		out.Write(patch[k])
		out.WriteByte(',')
	}
	out.WriteString(`"status":{"document":`)
	out.Write(doc)
	if inner := bytes.TrimSpace(rest[1 : len(rest)-1]); len(inner) > 0 {
		out.WriteByte(',')
		out.Write(inner)
	}
	out.WriteString("}}")
	return out.Bytes(), nil
}

// statusOnlyMergePatch is the merge patch between two objects that differ
// in their status alone: the statuses' diff under "status", or {} when they
// are equal (as a diff of the whole objects would give).
func statusOnlyMergePatch(base, next *v1alpha1.AIBOMStatus) ([]byte, error) {
	from, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(next)
	if err != nil {
		return nil, err
	}
	diff, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(diff), []byte("{}")) {
		return []byte("{}"), nil
	}
	out := make([]byte, 0, len(diff)+len(`{"status":}`))
	out = append(out, `{"status":`...)
	out = append(out, diff...)
	return append(out, '}'), nil
}

func setSubject(aibom *v1alpha1.AIBOM, entry graph.Entry, obj *unstructured.Unstructured) {
	aibom.Spec.Subject = v1alpha1.Subject{APIVersion: obj.GetAPIVersion(), Kind: entry.Kind.Kind, Name: obj.GetName(), UID: string(obj.GetUID())}
	if aibom.Labels == nil {
		aibom.Labels = map[string]string{}
	}
	aibom.Labels[ManagedByLabel] = ManagedBy
	// Garbage collection removes the AIBOM with its workload.
	aibom.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: obj.GetAPIVersion(), Kind: entry.Kind.Kind, Name: obj.GetName(), UID: obj.GetUID(),
		BlockOwnerDeletion: ptr.To(false),
	}}
}

// deleteAIBOM removes an AIBOM if the cache holds one, or if this process
// created it and has not seen it deleted (the cache may lag behind our own
// create): a workload that never had one costs no request.
func (r *Reconciler) deleteAIBOM(ctx context.Context, key client.ObjectKey, why string) error {
	return r.removeAIBOM(ctx, key, why, true)
}

// removeAIBOM deletes the AIBOM at key if it describes the workload being
// reconciled; notify offers the delete to the sinks.
func (r *Reconciler) removeAIBOM(ctx context.Context, key client.ObjectKey, why string, notify bool) error {
	var uid types.UID
	var subject v1alpha1.Subject
	var lastSHA string
	existing := &v1alpha1.AIBOM{}
	err := r.Reader.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		if _, ok := r.written.load(key); !ok {
			// The cache may lag: a workload this process reported as a
			// root is checked live once (invariants.go); any other costs
			// nothing.
			live, lerr := r.liveAIBOM(ctx, key)
			if lerr != nil {
				return lerr
			}
			if live == nil {
				return nil
			}
			existing, err = live, nil
		}
	}
	if apierrors.IsNotFound(err) {
		rec, _ := r.written.load(key)
		uid, lastSHA = rec.uid, rec.docSHA
		if w, ok := workloadOf(ctx); ok {
			subject = v1alpha1.Subject{Kind: w.Kind, Name: w.Name}
		}
	} else if err != nil {
		return fmt.Errorf("get AIBOM %s: %w", key, err)
	} else {
		uid, subject, lastSHA = existing.UID, existing.Spec.Subject, existing.Status.DocumentSHA256
		if w, ok := workloadOf(ctx); ok && (existing.Spec.Subject.Kind != w.Kind || existing.Spec.Subject.Name != w.Name) {
			// Not this workload's AIBOM, although it has its name: a
			// hand-made or foreign object, reported and left alone.
			foreignAIBOMs.WithLabelValues("left").Inc()
			log.FromContext(ctx).Info("AIBOM under this workload's AIBOM name describes another subject; left alone",
				"aibom", key.Name, "subject", existing.Spec.Subject.Kind+"/"+existing.Spec.Subject.Name)
			return nil
		}
	}
	victim := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	var opts []client.DeleteOption
	if uid != "" {
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err = r.Writer.Delete(ctx, victim, opts...)
	r.written.Delete(key)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		// Another AIBOM under that name (UID precondition): the next
		// event on it decides.
		return nil
	case err != nil:
		return fmt.Errorf("delete AIBOM %s: %w", key, err)
	}
	log.FromContext(ctx).Info("AIBOM deleted", "aibom", key.Name, "why", why)
	if notify && len(r.sinkNames()) > 0 {
		r.Sinks.Offer(DocumentEvent{Deleted: true, AIBOM: key, Subject: subject, SHA256: lastSHA})
	}
	return nil
}

// unchangedOutcome is the outcome of a reconcile that writes nothing.
func unchangedOutcome(scrapeErr error) string {
	if scrapeErr != nil {
		return OutcomeScrapeFailed
	}
	return OutcomeUnchanged
}

func (r *Reconciler) namespaceOptedIn(ctx context.Context, name string) (bool, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get namespace %s: %w", name, err)
	}
	if r.Mapper != nil && r.Mapper.Namespaces != nil {
		// The namespace filter the caches follow decides, with the
		// selector in force (an AIBOMConfig may change it).
		return r.Mapper.Namespaces.Selects(ns.GetLabels()), nil
	}
	return r.Settings.Selects(ns.GetLabels()), nil
}

// maxDocumentBytes is the inline cap in force.
func (r *Reconciler) maxDocumentBytes() int {
	if r.Settings != nil {
		return r.Settings.MaxDocumentBytes()
	}
	return r.MaxDocumentBytes
}

// countMiss counts a walk that ended without a tracked owner for a reason
// other than reaching a root, and logs it once per kind and reason.
func (r *Reconciler) countMiss(ctx context.Context, walk graph.WalkResult) {
	if walk.Reason == graph.ReasonRoot || walk.Reason == "" {
		return
	}
	rollupUnresolved.WithLabelValues(walk.MissKind, walk.Reason).Inc()
	if walk.Reason == graph.ReasonUntrackedKind {
		return // an owner of a kind nobody declared is ordinary, not a fault
	}
	if _, loaded := r.missLogged.LoadOrStore(walk.MissKind+"/"+walk.Reason, true); !loaded {
		log.FromContext(ctx).V(1).Info("ownership walk could not pass an owner: "+missCause(walk.Reason)+" (logged once per kind and cause)",
			"ownerKind", walk.MissKind, "reason", walk.Reason, "error", errString(walk.Err))
	}
}

// missCause words why a walk could not pass an owner, for its log line.
func missCause(reason string) string {
	switch reason {
	case graph.ReasonNoMatch:
		return "its kind is not served by the cluster; the workload reports as a root"
	case graph.ReasonForbidden:
		return "the controller may not read its kind; the workload reports as a root"
	case graph.ReasonNotSynced:
		return "its kind's cache is not synced yet; the workload waits"
	case graph.ReasonNotFound:
		return "it does not exist (deleted, or not created yet)"
	case graph.ReasonDepthCap:
		return "the chain is longer than the depth cap; the workload reports as a root"
	case graph.ReasonCycle:
		return "the chain leads back to itself; the workload reports as a root"
	default:
		return "reason " + reason + "; the workload reports as a root"
	}
}

// countClosureMisses counts the kinds a root's closure could not read (its
// objects' descendants and pods are missing from the root's document: no
// digest behind them) and logs each kind once.
func (r *Reconciler) countClosureMisses(ctx context.Context, desc graph.Descendants) {
	for _, kind := range desc.Misses {
		closureUnreadable.WithLabelValues(kind).Inc()
		if _, loaded := r.missLogged.LoadOrStore("closure/"+kind, true); !loaded {
			log.FromContext(ctx).V(1).Info("descendant closure could not read a kind (not served, forbidden or not synced); what lies below its objects is missing from root documents (logged once per kind)",
				"kind", kind)
		}
	}
}

// forgetReach drops what a workload that is no longer a root reached.
func (r *Reconciler) forgetReach(req Request) {
	r.danglingForget(req)
	if r.Mapper != nil {
		r.Mapper.Roots.rememberReach(req, nil)
	}
}

// undecidedBackoff is the delay before retrying a workload whose walk met a
// kind not synced yet: 1s, doubling up to a minute (the kind's sync replays
// its objects sooner).
func (r *Reconciler) undecidedBackoff(req Request) time.Duration {
	n := 0
	if v, ok := r.undecided.Load(req); ok {
		n = v.(int)
	}
	r.undecided.Store(req, n+1)
	return min(time.Second<<min(n, 6), time.Minute)
}

func (r *Reconciler) scrapeRetry() time.Duration {
	if r.ScrapeRetry > 0 {
		return r.ScrapeRetry
	}
	return 30 * time.Second
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// scrapeSafely runs an adapter's scraper, turning a panic into an error so
// that one malformed object never takes the manager down.
func scrapeSafely(ctx context.Context, a adapter.Adapter, obj *unstructured.Unstructured) (f adapter.Findings, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("adapter %s panicked: %v", a.Name(), p)
		}
	}()
	return a.Scrape(ctx, obj.DeepCopy())
}

func subjectOf(e graph.Entry, obj *unstructured.Unstructured) document.Subject {
	return document.Subject{APIVersion: obj.GetAPIVersion(), Group: e.Group, Kind: e.Kind.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}
}

func summaryOf(s document.Summary) v1alpha1.Summary {
	out := v1alpha1.Summary{Runtime: s.Runtime, Models: s.Models, Images: s.Images, Confidence: string(s.Confidence)}
	if len(s.Models) > 0 {
		out.Model = s.Models[0]
	}
	return out
}

// podsOf converts attributed pods into the digest resolver's view of them.
func podsOf(pods []*unstructured.Unstructured) []digest.Pod {
	out := make([]digest.Pod, 0, len(pods))
	for _, p := range pods {
		dp := digest.Pod{Name: p.GetName()}
		for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
			statuses, _, _ := unstructured.NestedSlice(p.Object, "status", field)
			for _, s := range statuses {
				m, ok := s.(map[string]any)
				if !ok {
					continue
				}
				name, _, _ := unstructured.NestedString(m, "name")
				image, _, _ := unstructured.NestedString(m, "image")
				imageID, _, _ := unstructured.NestedString(m, "imageID")
				dp.Statuses = append(dp.Statuses, digest.PodContainerStatus{Name: name, Image: image, ImageID: imageID, Init: field == "initContainerStatuses"})
			}
		}
		out = append(out, dp)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
