package reconcile

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

type offerLog struct {
	mu     sync.Mutex
	events []DocumentEvent
}

func (l *offerLog) Names() []string { return []string{"webhook"} }
func (l *offerLog) Offer(ev DocumentEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

// #29 item 8: an AIBOM the controller did not write (named otherwise than
// the controller names its subject's AIBOM) is shown Ready=False, never
// sent to a sink, and deleted by the sweep once older than the grace period
// when its subject does not exist; one whose subject exists is kept, marked.
func TestSweepMarksAndRemovesAIBOMsTheControllerDidNotWrite(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.r.Now = func() time.Time { return now }
	f.r.Mapper = &EventMapper{Registry: f.r.Registry, Store: f.r.Store, Reader: f.client}
	sinks := &offerLog{}
	f.r.Sinks = sinks
	apiVersion := coretest.WidgetGVK.GroupVersion().String()
	forged := func(name, subject string) *v1alpha1.AIBOM {
		a := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: coretest.Ns, Name: name, Labels: map[string]string{ManagedByLabel: ManagedBy},
			CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
			Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: apiVersion, Kind: "Widget", Name: subject, UID: "uid-" + subject}}}
		require.NoError(t, f.client.Create(ctx, a))
		a.Status.Document, a.Status.DocumentSHA256 = "{}", "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
		a.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonDocumentWritten, LastTransitionTime: metav1.NewTime(now)}}
		require.NoError(t, f.client.Status().Update(ctx, a))
		return a
	}
	ghost := forged("anything-at-all", "ghost")
	dup := forged("a-second-aibom-of-graph", "graph")
	require.False(t, IsControllerAIBOM(ghost))

	// The controller's own AIBOM of the root is untouched.
	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.True(t, IsControllerAIBOM(f.aibom(t)))
	offersBefore := len(sinks.events)

	res := f.r.Sweep(ctx)
	require.Equal(t, SweepResult{Foreign: 2, Marked: 2}, res, "within the grace period: marked only")
	for _, a := range []*v1alpha1.AIBOM{ghost, dup} {
		got := &v1alpha1.AIBOM{}
		require.NoError(t, f.client.Get(ctx, client.ObjectKeyFromObject(a), got))
		ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
		require.Equal(t, metav1.ConditionFalse, ready.Status, a.Name)
		require.Equal(t, v1alpha1.ReasonNotWrittenByController, ready.Reason)
	}
	require.Equal(t, SweepResult{Foreign: 2}, f.r.Sweep(ctx), "marked once")

	now = now.Add(DefaultForeignGrace)
	require.Equal(t, SweepResult{Foreign: 2, Deleted: 1}, f.r.Sweep(ctx))
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, client.ObjectKeyFromObject(ghost), &v1alpha1.AIBOM{})), "its subject does not exist: deleted")
	require.NoError(t, f.client.Get(ctx, client.ObjectKeyFromObject(dup), &v1alpha1.AIBOM{}), "its subject exists: kept, marked")
	require.NoError(t, f.client.Get(ctx, f.key, &v1alpha1.AIBOM{}))
	require.Len(t, sinks.events, offersBefore, "nothing the controller did not write reaches a sink, not even its delete")
}

// #29 item 3 (by invariant): an AIBOM of a kind that stopped being tracked,
// however it survived the loader's pass, is deleted by the next sweep.
func TestSweepLeavesAKindNoLongerTrackedToItsSubjectsReconcile(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	f.r.Mapper = &EventMapper{Registry: f.r.Registry, Store: f.r.Store, Reader: f.client}
	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	_, _, _, err = f.r.Registry.SetAdapters()
	require.NoError(t, err)
	require.Equal(t, SweepResult{}, f.r.Sweep(ctx), "the sweep deletes nothing of a kind no adapter tracks: it may be a generic root")
	require.NoError(t, f.client.Get(ctx, f.key, &v1alpha1.AIBOM{}))
	// The pass enqueues its subject, by the UID the AIBOM names: as a
	// generic root it absorbs nothing and embeds no AI workload, so its
	// AIBOM goes.
	a := &v1alpha1.AIBOM{}
	require.NoError(t, f.client.Get(ctx, f.key, a))
	req, ok := f.r.Mapper.subjectRequest(a)
	require.True(t, ok)
	require.Equal(t, types.UID(a.Spec.Subject.UID), req.UID)
	_, err = f.r.Reconcile(ctx, req)
	require.NoError(t, err)
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})))
}

// An AIBOM the controller did not write is checked as soon as it appears
// (its create event), not only at the next sweep: marked at once, retried
// when its grace period ends, then deleted.
func TestAnAIBOMTheControllerDidNotWriteIsCheckedOnItsEvent(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.r.Now = func() time.Time { return now }
	f.r.Mapper = &EventMapper{Registry: f.r.Registry, Store: f.r.Store, Reader: f.client}
	a := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: coretest.Ns, Name: "hand-made", CreationTimestamp: metav1.NewTime(now)},
		Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: coretest.WidgetGVK.GroupVersion().String(), Kind: "Widget", Name: "ghost"}}}
	require.NoError(t, f.client.Create(ctx, a))

	q := newTestQueue(t)
	f.r.Mapper.ForAIBOMs().Create(ctx, event.TypedCreateEvent[*v1alpha1.AIBOM]{Object: a}, q)
	var check *Request
	for q.Len() > 0 {
		req, _ := q.Get()
		if req.Op == OpAIBOM {
			check = &req
		}
		q.Done(req)
	}
	require.NotNil(t, check, "the create of a foreign AIBOM asks for its check")

	res, err := f.r.Reconcile(ctx, *check)
	require.NoError(t, err)
	require.Equal(t, DefaultForeignGrace, res.RequeueAfter, "retried when its grace period ends")
	got := &v1alpha1.AIBOM{}
	require.NoError(t, f.client.Get(ctx, client.ObjectKeyFromObject(a), got))
	require.Equal(t, v1alpha1.ReasonNotWrittenByController, meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady).Reason)

	now = now.Add(DefaultForeignGrace)
	_, err = f.r.Reconcile(ctx, *check)
	require.NoError(t, err)
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, client.ObjectKeyFromObject(a), &v1alpha1.AIBOM{})))
}
