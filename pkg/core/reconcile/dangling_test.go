package reconcile

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

func danglingWaitCount(end string) float64 {
	var m dto.Metric
	if err := danglingWaits.WithLabelValues("Widget.example.com", end).Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// #29 item 9: a workload whose controller owner is gone while the reference
// remains (a background deletion the garbage collector has not finished)
// writes no AIBOM within the grace, and is retried when it ends; past the
// grace it reports on its own.
func TestDanglingOwnerWaitsOutTheGraceBeforeReporting(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.r.Now = func() time.Time { return clock }
	f.r.DanglingGrace = 30 * time.Second
	gone := widgetObj("gone", "uid-gone", nil)
	f.r.Store = graph.NewMemoryStore([]client.Object{widgetObj("graph", "uid-graph", gone)})
	expiredBefore := danglingWaitCount("expired")

	res, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, res.RequeueAfter, "decided again when the grace ends")
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})), "no AIBOM within the grace")

	clock = clock.Add(10 * time.Second)
	res, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Equal(t, 20*time.Second, res.RequeueAfter, "the grace runs from the first reconcile that saw the reference dangle")
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})))

	clock = clock.Add(20 * time.Second)
	res, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter)
	require.Equal(t, "uid-graph", f.aibom(t).Spec.Subject.UID, "past the grace: a root")
	require.Equal(t, expiredBefore+1, danglingWaitCount("expired"))

	// Decided: later reconciles do not wait again.
	clock = clock.Add(time.Minute)
	res, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter)
	require.Equal(t, expiredBefore+1, danglingWaitCount("expired"), "counted once")
}

// An AIBOM the workload had before its reference started dangling (it was a
// root, then an owner was named that is gone) is kept through the wait,
// unchanged.
func TestDanglingOwnerKeepsAnExistingAIBOM(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	f.r.DanglingGrace = time.Minute
	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	before := f.aibom(t)

	f.r.Store = graph.NewMemoryStore([]client.Object{widgetObj("graph", "uid-graph", widgetObj("gone", "uid-gone", nil))})
	res, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Positive(t, res.RequeueAfter)
	after := f.aibom(t)
	require.Equal(t, before.ResourceVersion, after.ResourceVersion, "neither rewritten nor deleted")
}

// The garbage collector orphans the workload within the grace (it removes
// the reference): a root at once, and the wait counts as collected. An owner
// re-created under its name (another UID) is a dangling reference too.
func TestDanglingOwnerOrphanedWithinTheGraceIsARootAtOnce(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	f.r.DanglingGrace = time.Hour
	recreated := widgetObj("owner", "uid-new", nil)
	stale := widgetObj("graph", "uid-graph", widgetObj("owner", "uid-old", nil))
	f.r.Store = graph.NewMemoryStore([]client.Object{recreated, stale})
	res, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Positive(t, res.RequeueAfter, "a UID mismatch waits as a missing owner does")
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})))

	collectedBefore := danglingWaitCount("collected")
	f.r.Store = graph.NewMemoryStore([]client.Object{recreated, widgetObj("graph", "uid-graph", nil)})
	res, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter)
	require.Equal(t, "uid-graph", f.aibom(t).Spec.Subject.UID)
	require.Equal(t, collectedBefore+1, danglingWaitCount("collected"))
}

// Deleted by the garbage collector within the grace: nothing is written, and
// the wait ends (no entry left behind).
func TestDanglingOwnerDeletedWithinTheGraceLeavesNothing(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	f.r.DanglingGrace = time.Hour
	f.r.Store = graph.NewMemoryStore([]client.Object{widgetObj("graph", "uid-graph", widgetObj("gone", "uid-gone", nil))})
	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Len(t, f.r.dangling.since, 1)

	f.r.Store = graph.NewMemoryStore(nil)
	res, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter)
	require.Empty(t, f.r.dangling.since)
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})))
}

// With no grace (negative flag), a dangling reference decides at once, as
// the seed's degradation table had it.
func TestDanglingOwnerWithoutGrace(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	f.r.Store = graph.NewMemoryStore([]client.Object{widgetObj("graph", "uid-graph", widgetObj("gone", "uid-gone", nil))})
	res, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter)
	require.Equal(t, coretest.Ns, f.aibom(t).Namespace)
}

// An object being deleted (a terminating pod, an object held by a finalizer)
// whose owner is gone never reports on its own, however long its deletion
// takes: it goes.
func TestDanglingOwnerOfAnObjectBeingDeletedNeverExpires(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.r.Now = func() time.Time { return clock }
	f.r.DanglingGrace = 30 * time.Second
	w := widgetObj("graph", "uid-graph", widgetObj("gone", "uid-gone", nil))
	now := metav1.NewTime(clock)
	w.SetDeletionTimestamp(&now)
	w.SetFinalizers([]string{"example.com/hold"})
	f.r.Store = graph.NewMemoryStore([]client.Object{w})
	for i := 0; i < 3; i++ {
		res, err := f.r.Reconcile(ctx, f.req)
		require.NoError(t, err)
		require.Positive(t, res.RequeueAfter)
		require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})))
		clock = clock.Add(time.Hour)
	}
}
