package reconcile

import (
	"context"
	"testing"

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
