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

// coldChain is a Deployment, its ReplicaSet and its Pod, the mapper that
// reads them and the controller's kind of queue (a priority queue).
type coldChain struct {
	reg  *graph.Registry
	m    EventMapper
	objs []client.Object
	pq   priorityqueue.PriorityQueue[Request]
}

func newColdChain(t *testing.T) coldChain {
	reg := coretest.TestRegistry(t)
	w := &coretest.World{}
	d := w.Add(coretest.DeployGVK, "d", nil)
	rs := w.Add(coretest.RsGVK, "d-1", d)
	pod := w.Add(coretest.PodGVK, "d-1-x", rs)
	objs := []client.Object{d, rs, pod}
	pq := priorityqueue.New[Request]("test", func(o *priorityqueue.Opts[Request]) { o.Log = logr.Discard() })
	t.Cleanup(pq.ShutDown)
	return coldChain{reg: reg, m: EventMapper{Registry: reg, Store: graph.NewMemoryStore(objs), Roots: NewRootCache()}, objs: objs, pq: pq}
}

func (c coldChain) add(t *testing.T, o client.Object, q adder) {
	c.m.OnAdd(context.Background(), coretest.EntryOf(t, c.reg, o.GetObjectKind().GroupVersionKind()), o, q)
}

// drain runs the queue's requests as the workers would, the mapping ones
// resolved into q, and returns each request's operation in order and how
// often each workload was reconciled.
func (c coldChain) drain(q adder) ([]MapOp, map[Request]int) {
	var ops []MapOp
	reconciles := map[Request]int{}
	for c.pq.Len() > 0 {
		req, _ := c.pq.Get()
		ops = append(ops, req.Op)
		if !c.m.Process(context.Background(), req, q) {
			reconciles[req]++
		}
		c.pq.Forget(req)
		c.pq.Done(req)
	}
	return ops, reconciles
}

var coldRoot = Request{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "d"}

// At a cold start every object of a chain is mapped at once, before the
// workers run: the mapping requests go ahead of the reconciles on the
// controller's (priority) queue, so the reconcile each of them asks for
// joins the one already queued, and the root is reconciled once, not once
// per level below it.
func TestColdStartReconcilesARootOnce(t *testing.T) {
	c := newColdChain(t)
	sq := &StandbyQueue{}
	require.True(t, sq.attach(c.pq))
	for _, o := range c.objs {
		c.add(t, o, sq)
	}
	ops, reconciles := c.drain(sq)
	require.Contains(t, ops, OpDescendants, "a queue attached without the source asks for descendants")
	require.Equal(t, map[Request]int{coldRoot: 1}, reconciles)
}

// Before the workers start (the controller's source attached the queue and
// waits for the watches' first sync), an added object asks for no
// re-evaluation of its descendants: they are cached too and map themselves
// upward. The chain still ends in the root's one reconcile, with 4 requests
// instead of 7. Once WaitForSync returned, an addition asks for them again.
func TestNoDescendantsRequestsBeforeTheWorkers(t *testing.T) {
	c := newColdChain(t)
	sq := &StandbyQueue{}
	src := sq.Source(noWarmup{}).(startupSource)
	ctx := context.Background()
	require.NoError(t, src.Start(ctx, c.pq))
	require.True(t, sq.beforeWorkers())
	for _, o := range c.objs {
		c.add(t, o, sq)
	}
	ops, reconciles := c.drain(sq)
	require.NotContains(t, ops, OpDescendants)
	require.Len(t, ops, 4)
	require.Equal(t, map[Request]int{coldRoot: 1}, reconciles)

	require.NoError(t, src.WaitForSync(ctx))
	require.False(t, sq.beforeWorkers())
	c.add(t, c.objs[1], sq)
	after, _ := c.drain(sq)
	require.Contains(t, after, OpDescendants)
}

// The workers wait for the replay of what the watches held when the queue
// was attached (a leader that followed before holds every kind): the
// descendants requests are held back until it returned.
func TestWorkersWaitForTheStartupReplay(t *testing.T) {
	c := newColdChain(t)
	sq := &StandbyQueue{}
	warm := slowReplay{release: make(chan struct{})}
	src := sq.Source(warm).(startupSource)
	ctx := context.Background()
	require.NoError(t, src.Start(ctx, c.pq))
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
