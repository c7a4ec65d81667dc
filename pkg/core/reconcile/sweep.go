package reconcile

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// Clean-up by invariant, not by event. The controller owns the AIBOM
// namespace of an opted-in namespace: every AIBOM there is the controller's
// AIBOM of a current root, named AIBOMName(subject). The sweep, run at every
// re-verification pass (Resync), checks each AIBOM the cache holds:
//
//   - an AIBOM the controller did not write (its name is not the controller's
//     name for its subject) is shown Ready=False (NotWrittenByController),
//     is never exported or sent to a sink, and is deleted once it is older
//     than ForeignGrace and its subject does not exist.
//
// Every other AIBOM's subject is reconciled by the pass itself, which
// deletes the AIBOM of a workload that is not a current root and repairs
// any status field that is not what the controller would write.

// ReasonNotWrittenByController is the Ready reason of an AIBOM the
// controller did not write.
const ReasonNotWrittenByController = v1alpha1.ReasonNotWrittenByController

// DefaultForeignGrace is how long an AIBOM the controller did not write
// whose subject does not exist is kept (shown Ready=False) before the sweep
// deletes it.
const DefaultForeignGrace = 10 * time.Minute

// SweepResult counts what one sweep did.
type SweepResult struct {
	// Orphans are AIBOMs of kinds no longer tracked that the sweep
	// deleted: always 0 since such a kind is read as a generic root (its
	// subject's reconcile decides); kept for the log line's shape.
	Orphans int
	// Foreign are AIBOMs the controller did not write; Marked of them got
	// their Ready=False condition written, Deleted were removed.
	Foreign, Marked, Deleted int
}

// IsControllerAIBOM reports whether an AIBOM is named as the controller
// names the AIBOM of its subject (AIBOMName, or the name an earlier release
// used) and carries the controller's label. An AIBOM that is not is never
// the controller's: "aibom export" skips it, the sinks never get it.
func IsControllerAIBOM(a *v1alpha1.AIBOM) bool {
	return a.Labels[ManagedByLabel] == ManagedBy && namedForSubject(a)
}

// namedForSubject reports whether an AIBOM has the name the controller gives
// its subject's AIBOM (whoever wrote it: the subject's reconcile decides).
func namedForSubject(a *v1alpha1.AIBOM) bool {
	gk, ok := subjectGroupKind(a)
	if !ok || a.Spec.Subject.Name == "" {
		return false
	}
	if a.Name == AIBOMName(gk, a.Spec.Subject.Name) {
		return true
	}
	legacy, ok := LegacyAIBOMName(gk, a.Spec.Subject.Name)
	return ok && a.Name == legacy
}

// Sweep checks every AIBOM the cache holds against the invariants above.
func (r *Reconciler) Sweep(ctx context.Context) SweepResult {
	var res SweepResult
	if r.Mapper == nil || r.Mapper.Reader == nil {
		return res
	}
	var list v1alpha1.AIBOMList
	if err := r.Mapper.Reader.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "sweep: listing AIBOMs")
		return res
	}
	for i := range list.Items {
		a := &list.Items[i]
		if !a.DeletionTimestamp.IsZero() {
			continue
		}
		if _, ok := subjectGroupKind(a); ok && namedForSubject(a) {
			// Its subject's reconcile decides, the pass enqueues it: one of
			// a kind no adapter tracks any more (its profile removed) is
			// re-verified as a generic root.
			continue
		}
		if !r.Mapper.optedIn(a.Namespace) {
			continue // not the controller's namespace
		}
		res.Foreign++
		if r.markForeign(ctx, a) {
			res.Marked++
		}
		if r.now().Sub(a.CreationTimestamp.Time) >= r.foreignGrace() && !r.subjectExists(ctx, a) {
			if r.deleteSwept(ctx, a, "not written by the controller, and its subject does not exist") {
				res.Deleted++
				invariantRepairs.WithLabelValues("foreign_name").Inc()
			}
		}
	}
	return res
}

func (r *Reconciler) foreignGrace() time.Duration {
	if r.ForeignGrace > 0 {
		return r.ForeignGrace
	}
	return DefaultForeignGrace
}

// subjectExists reports whether an AIBOM's subject is a workload the
// controller can read (of a tracked kind, present in the cache). An
// unreadable kind counts as existing: nothing is deleted for what could not
// be read.
func (r *Reconciler) subjectExists(ctx context.Context, a *v1alpha1.AIBOM) bool {
	gk, ok := subjectGroupKind(a)
	if !ok {
		return false
	}
	entry, ok := r.Registry.Lookup(gk)
	if !ok || !entry.Tracked() {
		return false
	}
	_, err := r.Store.Get(ctx, entry, a.Namespace, a.Spec.Subject.Name)
	return !apierrors.IsNotFound(err)
}

// markForeign writes Ready=False (NotWrittenByController) on an AIBOM the
// controller did not write, unless it already says so.
func (r *Reconciler) markForeign(ctx context.Context, a *v1alpha1.AIBOM) bool {
	if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady); c != nil &&
		c.Status == metav1.ConditionFalse && c.Reason == ReasonNotWrittenByController {
		return false
	}
	base := a.DeepCopy()
	next := a.DeepCopy()
	meta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: ReasonNotWrittenByController, ObservedGeneration: a.Generation,
		Message: fmt.Sprintf("not written by the controller (its AIBOM of %s %s is named differently): not exported, not sent to sinks; deleted when its subject does not exist", a.Spec.Subject.Kind, a.Spec.Subject.Name)})
	if err := r.Writer.Status().Patch(ctx, next, client.MergeFrom(base)); err != nil {
		if !apierrors.IsNotFound(err) {
			log.FromContext(ctx).Error(err, "sweep: marking an AIBOM the controller did not write", "namespace", a.Namespace, "aibom", a.Name)
		}
		return false
	}
	invariantRepairs.WithLabelValues("foreign_status").Inc()
	log.FromContext(ctx).Info("AIBOM not written by the controller; marked Ready=False", "namespace", a.Namespace, "aibom", a.Name,
		"subject", a.Spec.Subject.Kind+"/"+a.Spec.Subject.Name)
	return true
}

// deleteSwept deletes an AIBOM the sweep found (UID precondition). Sinks
// are not told: what they hold came from the controller's own documents.
func (r *Reconciler) deleteSwept(ctx context.Context, a *v1alpha1.AIBOM, why string) bool {
	uid := a.UID
	victim := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.Name}}
	var opts []client.DeleteOption
	if uid != "" {
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err := r.Writer.Delete(ctx, victim, opts...)
	if err != nil {
		if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			log.FromContext(ctx).Error(err, "sweep: deleting an AIBOM", "namespace", a.Namespace, "aibom", a.Name)
		}
		return false
	}
	r.written.forgetDeleted(a)
	log.FromContext(ctx).Info("AIBOM deleted", "namespace", a.Namespace, "aibom", a.Name, "why", why)
	return true
}

// enqueueForeign asks for the check of an AIBOM of an opted-in namespace
// that is not named for its subject (OpAIBOM), as soon as it appears or its
// spec or conditions change: it is shown Ready=False at once, not at the
// next sweep.
func (m EventMapper) enqueueForeign(a *v1alpha1.AIBOM, q adder) {
	if namedForSubject(a) || !m.optedIn(a.Namespace) {
		return
	}
	q.Add(Request{Op: OpAIBOM, Namespace: a.Namespace, Name: a.Name})
}

func conditionsEqual(o, n *v1alpha1.AIBOM) bool {
	oc := meta.FindStatusCondition(o.Status.Conditions, v1alpha1.ConditionReady)
	nc := meta.FindStatusCondition(n.Status.Conditions, v1alpha1.ConditionReady)
	if oc == nil || nc == nil {
		return oc == nc
	}
	return oc.Status == nc.Status && oc.Reason == nc.Reason
}

// checkForeign is OpAIBOM: the sweep's check of one AIBOM. It is retried
// when its grace period ends.
func (r *Reconciler) checkForeign(ctx context.Context, req Request) (time.Duration, error) {
	a := &v1alpha1.AIBOM{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, a); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	if namedForSubject(a) || !a.DeletionTimestamp.IsZero() || (r.Mapper != nil && !r.Mapper.optedIn(a.Namespace)) {
		return 0, nil
	}
	r.markForeign(ctx, a)
	if r.subjectExists(ctx, a) {
		return 0, nil // kept, marked; the sweep looks again
	}
	if left := r.foreignGrace() - r.now().Sub(a.CreationTimestamp.Time); left > 0 {
		return left, nil
	}
	if r.deleteSwept(ctx, a, "not written by the controller, and its subject does not exist") {
		invariantRepairs.WithLabelValues("foreign_name").Inc()
	}
	return 0, nil
}
