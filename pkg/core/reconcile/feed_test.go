package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// At a cold start every object of a chain is mapped at once, before the
// workers run: the mapping requests go ahead of the reconciles on the
// controller's (priority) queue, so the reconcile each of them asks for
// joins the one already queued, and the root is reconciled once, not once
// per level below it.
func TestColdStartReconcilesARootOnce(t *testing.T) {
	reg := coretest.TestRegistry(t)
	w := &coretest.World{}
	d := w.Add(coretest.DeployGVK, "d", nil)
	rs := w.Add(coretest.RsGVK, "d-1", d)
	pod := w.Add(coretest.PodGVK, "d-1-x", rs)
	m := EventMapper{Registry: reg, Store: graph.NewMemoryStore([]client.Object{d, rs, pod}), Roots: NewRootCache()}
	pq := priorityqueue.New[Request]("test", func(o *priorityqueue.Opts[Request]) { o.Log = logr.Discard() })
	t.Cleanup(pq.ShutDown)
	sq := &StandbyQueue{}
	require.True(t, sq.attach(pq))
	ctx := context.Background()
	for _, o := range []client.Object{d, rs, pod} {
		m.OnAdd(ctx, coretest.EntryOf(t, reg, o.GetObjectKind().GroupVersionKind()), o, sq)
	}
	reconciles := map[Request]int{}
	for pq.Len() > 0 {
		req, _ := pq.Get()
		if !m.Process(ctx, req, sq) {
			reconciles[req]++
		}
		pq.Forget(req)
		pq.Done(req)
	}
	root := Request{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "d"}
	require.Equal(t, map[Request]int{root: 1}, reconciles)
}

// Before the workers start (the controller's source attached the queue and
// waits for the watches' first sync), an added object asks for no
// re-evaluation of its descendants: they are cached too and map themselves
// upward. The chain still ends in the root's one reconcile, with 4 requests
// instead of 7. Once WaitForSync returned, an addition asks for them again.
func TestNoDescendantsRequestsBeforeTheWorkers(t *testing.T) {
	reg := coretest.TestRegistry(t)
	w := &coretest.World{}
	d := w.Add(coretest.DeployGVK, "d", nil)
	rs := w.Add(coretest.RsGVK, "d-1", d)
	pod := w.Add(coretest.PodGVK, "d-1-x", rs)
	m := EventMapper{Registry: reg, Store: graph.NewMemoryStore([]client.Object{d, rs, pod}), Roots: NewRootCache()}
	pq := priorityqueue.New[Request]("test", func(o *priorityqueue.Opts[Request]) { o.Log = logr.Discard() })
	t.Cleanup(pq.ShutDown)
	sq := &StandbyQueue{}
	src := sq.Source(noWarmup{}).(startupSource)
	ctx := context.Background()
	require.NoError(t, src.Start(ctx, pq))
	require.True(t, sq.beforeWorkers())

	add := func(o client.Object) {
		m.OnAdd(ctx, coretest.EntryOf(t, reg, o.GetObjectKind().GroupVersionKind()), o, sq)
	}
	for _, o := range []client.Object{d, rs, pod} {
		add(o)
	}
	var ops []MapOp
	reconciles := map[Request]int{}
	for pq.Len() > 0 {
		req, _ := pq.Get()
		ops = append(ops, req.Op)
		if !m.Process(ctx, req, sq) {
			reconciles[req]++
		}
		pq.Forget(req)
		pq.Done(req)
	}
	require.NotContains(t, ops, OpDescendants)
	require.Len(t, ops, 4)
	root := Request{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "d"}
	require.Equal(t, map[Request]int{root: 1}, reconciles)

	require.NoError(t, src.WaitForSync(ctx))
	require.False(t, sq.beforeWorkers())
	add(rs)
	var after []MapOp
	for pq.Len() > 0 {
		req, _ := pq.Get()
		after = append(after, req.Op)
		pq.Forget(req)
		pq.Done(req)
	}
	require.Contains(t, after, OpDescendants)
}

// The workers wait for the replay of what the watches held when the queue
// was attached (a leader that followed before holds every kind): the
// descendants requests are held back until it returned.
func TestWorkersWaitForTheStartupReplay(t *testing.T) {
	pq := priorityqueue.New[Request]("test", func(o *priorityqueue.Opts[Request]) { o.Log = logr.Discard() })
	t.Cleanup(pq.ShutDown)
	sq := &StandbyQueue{}
	warm := slowReplay{release: make(chan struct{})}
	src := sq.Source(warm).(startupSource)
	ctx := context.Background()
	require.NoError(t, src.Start(ctx, pq))
	synced := make(chan struct{})
	go func() {
		_ = src.WaitForSync(ctx)
		close(synced)
	}()
	select {
	case <-synced:
		t.Fatal("WaitForSync returned while the replay ran")
	case <-time.After(50 * time.Millisecond):
	}
	require.True(t, sq.beforeWorkers())
	close(warm.release)
	<-synced
	require.False(t, sq.beforeWorkers())
}

type slowReplay struct{ release chan struct{} }

func (slowReplay) WaitForStartup(context.Context) {}
func (s slowReplay) ReplayAll(context.Context)    { <-s.release }

type noWarmup struct{}

func (noWarmup) WaitForStartup(context.Context) {}
func (noWarmup) ReplayAll(context.Context)      {}
