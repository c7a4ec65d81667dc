package configuration

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/sink"
)

// StatusWriter records the sinks' results in the AIBOMs' statuses
// (status.sinks, the Synced and SinkFailed conditions, and status.documentRef
// for a document over the inline cap that a sink accepted). It is the
// dispatcher's Reporter: Report never blocks; results are coalesced per
// AIBOM and written by a worker, with optimistic locking so that a
// concurrent write of the reconciler is never overwritten.
type StatusWriter struct {
	// Client writes the status; Cache reads AIBOMs (without documents);
	// API reads them from the API server (after a conflict).
	Client client.Client
	Cache  client.Reader
	API    client.Reader
	// Sinks lists the configured sinks.
	Sinks interface{ Names() []string }
	// MaxInline is the inline cap in force.
	MaxInline func() int
	Log       logr.Logger

	once    sync.Once
	mu      sync.Mutex
	pending map[types.NamespacedName]map[string]sink.Result
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

func (w *StatusWriter) init() {
	w.once.Do(func() {
		w.pending = map[types.NamespacedName]map[string]sink.Result{}
		w.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "aibom_sink_status"})
	})
}

// Report implements sink.Reporter.
func (w *StatusWriter) Report(r sink.Result) {
	if r.Op != sink.OpWrite {
		return // a deleted AIBOM has no status to write; metrics and logs say it
	}
	w.init()
	w.mu.Lock()
	m := w.pending[r.AIBOM]
	if m == nil {
		m = map[string]sink.Result{}
		w.pending[r.AIBOM] = m
	}
	m[r.Sink] = r
	w.mu.Unlock()
	if r.State == v1alpha1.DeliveryPending {
		// Every failed attempt is reported; one write per AIBOM in
		// pendingWriteDelay carries the latest count (a final outcome is
		// written at once and carries it too).
		w.queue.AddAfter(r.AIBOM, pendingWriteDelay)
		return
	}
	w.queue.Add(r.AIBOM)
}

// pendingWriteDelay bounds how often retries of one AIBOM's delivery are
// written into its status.
const pendingWriteDelay = 5 * time.Second

// Start runs the worker until ctx ends (a manager Runnable, on the leader).
func (w *StatusWriter) Start(ctx context.Context) error {
	w.init()
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	for {
		key, shutdown := w.queue.Get()
		if shutdown {
			return nil
		}
		w.mu.Lock()
		results := w.pending[key]
		delete(w.pending, key)
		w.mu.Unlock()
		if err := w.write(ctx, key, results); err != nil && ctx.Err() == nil {
			w.Log.Error(err, "writing sink results into an AIBOM's status; retrying", "aibom", key.String())
			w.mu.Lock()
			m := w.pending[key]
			if m == nil {
				w.pending[key] = results
			} else {
				for s, r := range results {
					if _, newer := m[s]; !newer {
						m[s] = r
					}
				}
			}
			w.mu.Unlock()
			w.queue.AddRateLimited(key)
		} else {
			w.queue.Forget(key)
		}
		w.queue.Done(key)
	}
}

func (w *StatusWriter) write(ctx context.Context, key types.NamespacedName, results map[string]sink.Result) error {
	a := &v1alpha1.AIBOM{}
	fresh := false
	if err := w.Cache.Get(ctx, key, a); apierrors.IsNotFound(err) {
		// A sink can deliver a new AIBOM's document before the cache has
		// seen the AIBOM: decide on the API server's copy, or the receipt
		// is lost.
		if err := w.API.Get(ctx, key, a); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		fresh = true
	} else if err != nil {
		return err
	}
	for attempt := 0; attempt < 5; attempt++ {
		base := a.DeepCopy()
		changed, stale, swap := w.apply(a, results)
		if (stale || swap) && !fresh {
			// The cache may not have seen the reconciler's last write (a
			// newer document), or lacks the body a swap removes: decide
			// on the API server's copy.
			if err := w.API.Get(ctx, key, a); apierrors.IsNotFound(err) {
				return nil
			} else if err != nil {
				return err
			}
			fresh = true
			continue
		}
		if !changed {
			return nil
		}
		done := reconcile.ExpectWrite(key)
		err := w.Client.Status().Patch(ctx, a, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			// The answer is the stored AIBOM, at a version based on
			// base's (the optimistic lock): its echo is not read.
			done(base.ResourceVersion, a.DeepCopy())
		} else {
			done("", nil)
		}
		switch {
		case err == nil:
			return nil
		case apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			if err := w.API.Get(ctx, key, a); apierrors.IsNotFound(err) {
				return nil
			} else if err != nil {
				return err
			}
			fresh = true
		default:
			return err
		}
	}
	return apierrors.NewConflict(v1alpha1.GroupVersion.WithResource("aiboms").GroupResource(), key.Name, nil)
}

// apply merges results into a's status. stale: a result is about another
// document than the one a's status holds (on the cache's copy: perhaps the
// cache is behind); swap: a sink accepted a document over the inline cap,
// whose body is to be replaced by a reference.
func (w *StatusWriter) apply(a *v1alpha1.AIBOM, results map[string]sink.Result) (changed, stale, swap bool) {
	names := w.Sinks.Names()
	for _, r := range results {
		if !contains(names, r.Sink) {
			continue // removed from the configuration meanwhile
		}
		var cur *v1alpha1.SinkDelivery
		for i := range a.Status.Sinks {
			if a.Status.Sinks[i].Sink == r.Sink {
				cur = &a.Status.Sinks[i]
			}
		}
		if cur != nil && cur.DocumentSHA256 != "" && cur.DocumentSHA256 != r.SHA256 {
			stale = true
			continue
		}
		if cur == nil && a.Status.DocumentSHA256 == "" {
			// No document yet: the cache may not have seen the status
			// the reconciler wrote with it.
			stale = true
			continue
		}
		msg, _ := podtemplate.Redact(r.Message)
		if len(msg) > 1000 {
			msg = msg[:1000]
		}
		next := v1alpha1.SinkDelivery{Sink: r.Sink, State: r.State, DocumentSHA256: r.SHA256, Reason: r.Reason, Message: msg,
			Attempts: int32(min(r.Attempts, 1<<30)), LastAttemptTime: &metav1.Time{Time: r.At.Truncate(time.Second)}}
		if r.State == v1alpha1.DeliveryPending && !r.NextAttempt.IsZero() {
			// Rounded up: the attempt is never before the time written.
			at := r.NextAttempt.Truncate(time.Second)
			if at.Before(r.NextAttempt) {
				at = at.Add(time.Second)
			}
			next.NextAttemptTime = &metav1.Time{Time: at}
		}
		if r.State == v1alpha1.DeliveryDelivered {
			next.Location = r.Location
			// A reference to this location is genuine (the reconciler
			// trusts no other status.documentRef).
			reconcile.TrustDelivery(a.UID, r.Sink, r.Location, r.SHA256)
		} else if cur != nil {
			next.Location = cur.Location
		}
		if r.State != v1alpha1.DeliveryDelivered && reconcile.TrustedReceipt(a.UID, cur) {
			// A late failure report of a document delivered since: keep.
			// (A Delivered receipt this process did not see written is no
			// delivery: the failure replaces it.)
			continue
		}
		if cur == nil {
			a.Status.Sinks = append(a.Status.Sinks, next)
		} else if equality.Semantic.DeepEqual(*cur, next) {
			continue // a result reported again (the sink holds the document already)
		} else {
			*cur = next
		}
		changed = true
		if r.State == v1alpha1.DeliveryDelivered && a.Status.DocumentRef == nil && r.Location != "" &&
			w.MaxInline != nil && r.Size > w.MaxInline() && a.Status.DocumentSHA256 != r.SHA256 {
			if a.Status.Document == "" && a.Status.DocumentSHA256 != "" {
				swap = true // the cache's copy: no body to compare or remove
				continue
			}
			a.Status.Document, a.Status.DocumentSHA256, a.Status.DocumentSize = "", r.SHA256, r.Size
			a.Status.DocumentRef = &v1alpha1.DocumentReference{Sink: r.Sink, Location: r.Location, SHA256: r.SHA256, Size: r.Size}
			meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionTruncated, Status: metav1.ConditionFalse,
				Reason: v1alpha1.ReasonStoredInSink, ObservedGeneration: a.Generation,
				Message: "the document exceeds the inline cap; sink " + r.Sink + " holds it (status.documentRef)"})
		}
	}
	if !changed {
		return false, stale, swap
	}
	synced, failed := reconcile.SinkConditions(a.Status.Sinks, names)
	synced.ObservedGeneration, failed.ObservedGeneration = a.Generation, a.Generation
	meta.SetStatusCondition(&a.Status.Conditions, synced)
	meta.SetStatusCondition(&a.Status.Conditions, failed)
	return true, stale, swap
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
