package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// OptInLabel is the namespace label that opts a namespace in.
const OptInLabel = "aibom.dev/enabled"

// Request names one tracked workload to reconcile.
type Request struct {
	schema.GroupKind
	Namespace string
	Name      string
}

func (r Request) String() string { return r.GroupKind.String() + " " + r.Namespace + "/" + r.Name }

// Reconciler turns a tracked workload into its AIBOM, or removes the AIBOM
// when the workload is absorbed, deleted or its namespace opted out.
type Reconciler struct {
	Registry *Registry
	// Store reads registered kinds (normally the informer cache).
	Store Store
	// Kinds tells whether a kind is being removed from the cluster (its CRD
	// deleted); may be nil.
	Kinds interface {
		Removing(ctx context.Context, e Entry) bool
	}
	// Reader reads namespaces and AIBOMs (normally the informer cache).
	Reader client.Reader
	// Writer writes AIBOMs.
	Writer client.Client
	// Recorder emits Kubernetes Events; may be nil.
	Recorder events.EventRecorder
	// Tool names the controller in documents.
	Tool document.Tool
	// MaxDocumentBytes is the inline cap of a document; 0 means no cap.
	MaxDocumentBytes int
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
	// References records the referenced objects each root used (see
	// references.go); may be nil.
	References *ReferenceIndex

	missLogged sync.Map // "<kind>/<reason>" -> true: one log line per kind per process
	// written remembers the input hash last written per AIBOM, so that a
	// reconcile running on a cache that has not yet seen our own write does
	// not write the same status again.
	written sync.Map // client.ObjectKey -> input hash
}

// errStaleCache marks a write refused because the cache lagged behind the
// API server (an AIBOM created meanwhile): the workload is retried shortly,
// without an error.
var errStaleCache = errors.New("cache behind the API server")

// Walker returns the upward walk over the reconciler's store.
func (r *Reconciler) Walker() Walker { return Walker{Registry: r.Registry, Store: r.Store} }

// Closure returns the descendant closure over the reconciler's store.
func (r *Reconciler) Closure() Closure { return Closure{Registry: r.Registry, Store: r.Store} }

// Reconcile implements reconcile.TypedReconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req Request) (reconcile.Result, error) {
	logger := log.FromContext(ctx).WithValues("kind", req.GroupKind.String(), "namespace", req.Namespace, "name", req.Name)
	ctx = log.IntoContext(ctx, logger)
	outcome, err := r.reconcileWorkload(ctx, req)
	if forgetsReferences(outcome) {
		r.References.Forget(req)
	}
	if errors.Is(err, errStaleCache) {
		logger.V(1).Info("cache behind the API server; retrying shortly")
		return reconcile.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	reconcileOutcomes.WithLabelValues(req.GroupKind.String(), outcome).Inc()
	if err != nil {
		logger.Error(err, "reconcile failed", "outcome", outcome)
		return reconcile.Result{}, err
	}
	logger.V(1).Info("reconciled", "outcome", outcome)
	if outcome == OutcomeScrapeFailed {
		// An adapter can fail for a while (a plugin restarting): try again
		// without waiting for the workload to change.
		return reconcile.Result{RequeueAfter: r.scrapeRetry()}, nil
	}
	return reconcile.Result{}, nil
}

func (r *Reconciler) reconcileWorkload(ctx context.Context, req Request) (string, error) {
	entry, ok := r.Registry.Lookup(req.GroupKind)
	if !ok || !entry.Tracked() {
		return OutcomeError, reconcile.TerminalError(fmt.Errorf("kind %s is not a tracked kind", req.GroupKind))
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
		return OutcomeDeleted, r.deleteAIBOM(ctx, aibomKey, "workload deleted")
	}
	if errors.Is(err, ErrKindNotReady) {
		// Its informer enqueues every object once it syncs; meanwhile the
		// AIBOM, if any, is kept.
		return OutcomeKindUnavailable, nil
	}
	if err != nil {
		return OutcomeError, fmt.Errorf("get %s: %w", req, err)
	}

	walk := r.Walker().TrackedOwner(ctx, obj)
	if walk.Owner != nil {
		log.FromContext(ctx).V(1).Info("rolled up into tracked owner", "owner", walk.Owner.GroupKind.String()+"/"+walk.Owner.Name, "hops", walk.Hops)
		return OutcomeRolledUp, r.deleteAIBOM(ctx, aibomKey, "rolled up into "+walk.Owner.GroupKind.Kind+"/"+walk.Owner.Name)
	}
	r.countMiss(ctx, walk)

	desc, err := r.Closure().Descendants(ctx, obj)
	if err != nil {
		return OutcomeError, err
	}
	r.countClosureMisses(ctx, desc)
	r.reportUnfitPods(ctx, obj, desc)
	return r.report(r.withResolver(ctx, req.Namespace), entry, obj.(*unstructured.Unstructured), desc, aibomKey)
}

// report scrapes the root, builds its document and writes the AIBOM when the
// inputs changed.
func (r *Reconciler) report(ctx context.Context, entry Entry, obj *unstructured.Unstructured, desc Descendants, key client.ObjectKey) (string, error) {
	existing := &v1alpha1.AIBOM{}
	if err := r.Reader.Get(ctx, key, existing); apierrors.IsNotFound(err) {
		existing = nil
	} else if err != nil {
		return OutcomeError, fmt.Errorf("get AIBOM %s: %w", key, err)
	}

	// The fast path compares the inputs' hash before any document is built.
	inputs := GatherInputs(ctx, entry, obj, desc, r.Tool, r.MaxDocumentBytes)
	r.References.Set(Request{GroupKind: entry.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}, inputs.Referenced)
	if !r.ReportAll && inputs.Unmatched() {
		// No AI signal: no AIBOM. An existing one (the workload changed, or
		// every root was reported before) is deleted.
		if existing == nil {
			return OutcomeUnmatched, nil
		}
		return OutcomeUnmatched, r.deleteAIBOM(ctx, key, "no AI signal (unmatched)")
	}
	if existing != nil && existing.Spec.Subject.UID == string(obj.GetUID()) {
		if last, ok := r.written.Load(key); existing.Status.InputHash == inputs.Hash || (ok && last == inputs.Hash) {
			if inputs.ScrapeErr != nil {
				// Still failing the same way: nothing to write, but the
				// failure is counted and retried (an adapter plugin may
				// come back).
				return OutcomeScrapeFailed, nil
			}
			return OutcomeUnchanged, nil
		}
	}
	rep := inputs.Build()
	status, ready, truncated := rep.Status, rep.Ready, rep.Truncated
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
	return r.write(ctx, entry, obj, existing, key, status, ready, truncated, outcome)
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
	if existing != nil {
		status.Document, status.DocumentSHA256, status.DocumentSize = existing.Status.Document, existing.Status.DocumentSHA256, existing.Status.DocumentSize
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

func (r *Reconciler) write(ctx context.Context, entry Entry, obj *unstructured.Unstructured, existing *v1alpha1.AIBOM, key client.ObjectKey,
	status v1alpha1.AIBOMStatus, ready metav1.Condition, truncated *metav1.Condition, outcome string) (string, error) {
	now := metav1.NewTime(r.now())
	aibom := existing
	if aibom == nil {
		if outcome == OutcomeUpdated {
			outcome = OutcomeCreated
		}
		aibom = &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		setSubject(aibom, entry, obj)
		if err := r.Writer.Create(ctx, aibom); apierrors.IsAlreadyExists(err) {
			return OutcomeError, errStaleCache
		} else if err != nil {
			return OutcomeError, fmt.Errorf("create AIBOM %s: %w", key, err)
		}
	} else {
		aibom = existing.DeepCopy()
		if aibom.Spec.Subject.UID != string(obj.GetUID()) {
			// The workload was re-created under the same name: re-point the
			// AIBOM at the new object.
			setSubject(aibom, entry, obj)
			if err := r.Writer.Update(ctx, aibom); err != nil {
				return OutcomeError, fmt.Errorf("update AIBOM %s: %w", key, err)
			}
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
	// A merge patch without a resourceVersion precondition: the controller
	// is the only writer of the status, and a reconcile on a lagging cache
	// must not fail on a conflict with our own previous write.
	base := aibom.DeepCopy()
	aibom.Status = status
	if err := r.Writer.Status().Patch(ctx, aibom, client.MergeFrom(base)); err != nil {
		return OutcomeError, fmt.Errorf("write AIBOM status %s: %w", key, err)
	}
	r.written.Store(key, status.InputHash)
	log.FromContext(ctx).Info("AIBOM written", "aibom", key.Name, "outcome", outcome, "absorbed", len(status.Absorbed), "sha256", status.DocumentSHA256)
	return outcome, nil
}

func setSubject(aibom *v1alpha1.AIBOM, entry Entry, obj *unstructured.Unstructured) {
	aibom.Spec.Subject = v1alpha1.Subject{APIVersion: obj.GetAPIVersion(), Kind: entry.Kind.Kind, Name: obj.GetName(), UID: string(obj.GetUID())}
	// Garbage collection removes the AIBOM with its workload.
	aibom.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: obj.GetAPIVersion(), Kind: entry.Kind.Kind, Name: obj.GetName(), UID: obj.GetUID(),
		BlockOwnerDeletion: ptr.To(false),
	}}
}

// deleteAIBOM removes an AIBOM if the cache holds one: a workload that never
// had one costs no request.
//
// The input hash remembered for the AIBOM is forgotten whether or not the
// cache still holds it: garbage collection usually removes a deleted
// workload's AIBOM before this reconcile runs, and the memory must not
// outlive the AIBOM.
func (r *Reconciler) deleteAIBOM(ctx context.Context, key client.ObjectKey, why string) error {
	r.written.Delete(key)
	existing := &v1alpha1.AIBOM{}
	if err := r.Reader.Get(ctx, key, existing); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("get AIBOM %s: %w", key, err)
	}
	if err := r.Writer.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete AIBOM %s: %w", key, err)
	}
	log.FromContext(ctx).Info("AIBOM deleted", "aibom", key.Name, "why", why)
	return nil
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
	return ns.GetLabels()[OptInLabel] == "true", nil
}

// countMiss counts a walk that ended without a tracked owner for a reason
// other than reaching a root, and logs it once per kind and reason.
func (r *Reconciler) countMiss(ctx context.Context, walk WalkResult) {
	if walk.Reason == ReasonRoot || walk.Reason == "" {
		return
	}
	rollupUnresolved.WithLabelValues(walk.MissKind, walk.Reason).Inc()
	if walk.Reason == ReasonUntrackedKind {
		return // an owner of a kind nobody declared is ordinary, not a fault
	}
	if _, loaded := r.missLogged.LoadOrStore(walk.MissKind+"/"+walk.Reason, true); !loaded {
		log.FromContext(ctx).Info("ownership walk could not pass an owner; reporting the workload as a root (logged once per kind)",
			"ownerKind", walk.MissKind, "reason", walk.Reason, "error", errString(walk.Err))
	}
}

// countClosureMisses counts the kinds a root's closure could not read (its
// objects' descendants and pods are missing from the root's document: no
// digest behind them) and logs each kind once.
func (r *Reconciler) countClosureMisses(ctx context.Context, desc Descendants) {
	for _, kind := range desc.Misses {
		closureUnreadable.WithLabelValues(kind).Inc()
		if _, loaded := r.missLogged.LoadOrStore("closure/"+kind, true); !loaded {
			log.FromContext(ctx).Info("descendant closure could not read a kind; what lies below its objects is missing from root documents (logged once per kind)",
				"kind", kind)
		}
	}
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

func subjectOf(e Entry, obj *unstructured.Unstructured) document.Subject {
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
