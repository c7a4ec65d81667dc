package reconcile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// chainWorld is a chain of n tracked Deployments, each controlled by the
// previous one, with a ReplicaSet and a pod below the last.
func chainWorld(n int) *coretest.World {
	w := &coretest.World{}
	var prev client.Object
	for i := range n {
		prev = w.Add(coretest.DeployGVK, fmt.Sprintf("d%04d", i), prev)
	}
	rs := w.Add(coretest.RsGVK, "rs", prev)
	w.Add(coretest.PodGVK, "pod", rs)
	return w
}

// replayChain replays every Deployment of the chain, as a kind's sync does,
// resolves every mapping request and returns the reads it cost and the
// workloads it asked to reconcile.
func replayChain(t testing.TB, reg *graph.Registry, w *coretest.World) (reads int, reconciles map[Request]bool) {
	counting := &coretest.CountingStore{Store: graph.NewMemoryStore(w.Objs)}
	m := EventMapper{Registry: reg, Store: counting, Roots: NewRootCache()}
	q := &sliceQueue{}
	ctx := context.Background()
	var deploys []client.Object
	for _, o := range w.Objs {
		if o.GetObjectKind().GroupVersionKind() == coretest.DeployGVK {
			deploys = append(deploys, o)
		}
	}
	m.Replay(ctx, entryOf(t, reg), deploys, q)
	reconciles = map[Request]bool{}
	for len(q.items) > 0 {
		req := q.items[0]
		q.items = q.items[1:]
		if !m.Process(ctx, req, q) {
			reconciles[req] = true
		}
	}
	return counting.Gets + counting.Lists, reconciles
}

func entryOf(t testing.TB, reg *graph.Registry) graph.Entry {
	e, ok := reg.Lookup(coretest.DeployGVK.GroupKind())
	require.True(t, ok)
	return e
}

type sliceQueue struct{ items []Request }

func (q *sliceQueue) Add(r Request) { q.items = append(q.items, r) }

// #29 item 10: replaying a chain of N tracked workloads resolves each level
// once: O(N) reads, not O(N^2), and still reconciles every workload of it.
func TestChainReplayIsLinear(t *testing.T) {
	reg := coretest.TestRegistry(t)
	const n = 400
	reads, reconciles := replayChain(t, reg, chainWorld(n))
	require.Len(t, reconciles, n, "every workload of the chain is reconciled")
	t.Logf("replay of a %d-level chain: %d reads", n, reads)
	require.LessOrEqual(t, reads, 20*n, "each level resolved once per replay")
}

// The replay asks for exactly the reconciles that mapping each object as a
// creation asks for, on random forests of Deployments with ReplicaSets,
// dangling and re-created owners and cycles.
func TestReplayReconcilesWhatOnAddDoes(t *testing.T) {
	reg := coretest.TestRegistry(t)
	rng := rand.New(rand.NewPCG(29, 10))
	for iter := range 300 {
		w := &coretest.World{}
		n := 1 + rng.IntN(12)
		for i := range n {
			var owner client.Object
			if i > 0 && rng.IntN(4) > 0 {
				owner = w.Objs[rng.IntN(len(w.Objs))]
			}
			gvk := coretest.DeployGVK
			if rng.IntN(4) == 0 {
				gvk = coretest.RsGVK
			}
			w.Add(gvk, fmt.Sprintf("o%02d", i), owner)
		}
		switch rng.IntN(3) {
		case 0: // a cycle through the first object
			if last := w.Objs[len(w.Objs)-1]; last != w.Objs[0] {
				coretest.SetController(w.Objs[0], last)
			}
		case 1: // a dangling owner (re-created: same name, another UID)
			o := w.Objs[rng.IntN(len(w.Objs))]
			refs := o.GetOwnerReferences()
			if len(refs) > 0 {
				refs[0].UID = "uid-gone"
				o.SetOwnerReferences(refs)
			}
		}
		_, got := replayChain(t, reg, w)
		want := onAddAll(t, reg, w)
		require.Equal(t, want, got, "forest %d", iter)
	}
}

func onAddAll(t *testing.T, reg *graph.Registry, w *coretest.World) map[Request]bool {
	m := EventMapper{Registry: reg, Store: graph.NewMemoryStore(w.Objs), Roots: NewRootCache()}
	q := &sliceQueue{}
	ctx := context.Background()
	for _, o := range w.Objs {
		if o.GetObjectKind().GroupVersionKind() == coretest.DeployGVK {
			m.OnAdd(ctx, coretest.EntryOf(t, reg, coretest.DeployGVK), o, q)
		}
	}
	out := map[Request]bool{}
	for len(q.items) > 0 {
		req := q.items[0]
		q.items = q.items[1:]
		if !m.Process(ctx, req, q) {
			out[req] = true
		}
	}
	return out
}

// BenchmarkChainReplay: store reads of replaying a chain of N tracked
// workloads (reported as reads/op).
func BenchmarkChainReplay(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			reg := coretest.TestRegistry(b)
			w := chainWorld(n)
			reads := 0
			for b.Loop() {
				reads, _ = replayChain(b, reg, w)
			}
			b.ReportMetric(float64(reads), "reads/op")
		})
	}
}

// An owner deleted while its kind was not watched raised no event: at the
// kind's sync, the workloads its controller reference still names are
// re-evaluated (its descendants request), and an owner still there costs
// nothing.
func TestKindSyncReEvaluatesTheChildrenOfOwnersDeletedUnseen(t *testing.T) {
	reg := coretest.TestRegistry(t)
	w := &coretest.World{}
	gone := w.Add(coretest.WidgetGVK, "gone", nil)
	kept := w.Add(coretest.WidgetGVK, "kept", nil)
	orphan := w.Add(coretest.DeployGVK, "orphan", gone)
	child := w.Add(coretest.DeployGVK, "child", kept)
	// The cache after the sync: the deleted Widget is not in it.
	m := EventMapper{Registry: reg, Store: graph.NewMemoryStore([]client.Object{kept, orphan, child}), Roots: NewRootCache()}
	q := newTestQueue(t)
	m.enqueueMissedDeletes(context.Background(), coretest.EntryOf(t, reg, coretest.WidgetGVK), []client.Object{kept}, q)
	var got []Request
	for q.Len() > 0 {
		req, _ := q.Get()
		got = append(got, req)
		q.Done(req)
	}
	require.Equal(t, []Request{{Op: OpDescendants, GroupKind: coretest.WidgetGVK.GroupKind(), Namespace: coretest.Ns, Name: "gone", UID: gone.GetUID()}}, got)
	// Resolved, the request reaches the orphaned Deployment.
	q.Add(got[0])
	require.Contains(t, drainMapped(context.Background(), m, q), Request{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "orphan"})
}
