package reconcile

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Replay maps a kind's cached objects as if each had just been created
// (a kind's sync, the leader's start), resolving each ownership level once
// per replay. A tracked object whose controller is another replayed object
// of its kind (by name and UID), on a chain that reaches a replayed top,
// needs only its own reconcile: the top's OpRootOf finds the root for the
// whole chain, and the top's OpDescendants, when OnAdd asks for one (not
// before the workers start, when every object below is replayed too),
// reaches every tracked object below it (the closure resets its depth at
// each tracked object). Without
// this, every level of a chain of N re-walked the levels above and listed
// the levels below it: ~3.5 N^2 store reads (TestChainReplayIsLinear).
// Members of an ownerReference cycle and everything else are mapped as
// OnAdd maps them.
func (m EventMapper) Replay(ctx context.Context, e graph.Entry, objs []client.Object, q adder) {
	if sq, ok := q.(*StandbyQueue); ok && !sq.Attached() {
		return
	}
	covered := coveredByReplay(e, objs)
	for _, obj := range objs {
		if !covered[obj.GetUID()] {
			m.OnAdd(ctx, e, obj, q)
			continue
		}
		if m.optedIn(obj.GetNamespace()) {
			q.Add(Request{GroupKind: e.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()})
		}
	}
}

// coveredByReplay returns the replayed objects (of tracked kind e) whose
// controller is another replayed object of the same kind, on a chain of such
// edges that ends at a replayed object that is not covered itself (a top).
// Each object is visited once: O(len(objs)).
func coveredByReplay(e graph.Entry, objs []client.Object) map[types.UID]bool {
	if !e.Tracked() || len(objs) < 2 {
		return nil
	}
	byUID := make(map[types.UID]client.Object, len(objs))
	for _, o := range objs {
		byUID[o.GetUID()] = o
	}
	gk := e.GroupKind()
	parent := func(o client.Object) client.Object {
		ref := metav1.GetControllerOfNoCopy(o)
		if ref == nil || graph.RefGroupKind(ref) != gk {
			return nil
		}
		p, ok := byUID[ref.UID]
		if !ok || p.GetName() != ref.Name || p.GetNamespace() != o.GetNamespace() {
			return nil
		}
		return p
	}
	const (
		unknown = iota
		visiting
		reachesTop
		inCycle
	)
	state := make(map[types.UID]uint8, len(objs))
	covered := map[types.UID]bool{}
	for _, o := range objs {
		var path []client.Object
		cur := o
		result := uint8(reachesTop)
		for {
			s := state[cur.GetUID()]
			if s == reachesTop || s == inCycle {
				result = s
				break
			}
			if s == visiting {
				result = inCycle
				break
			}
			state[cur.GetUID()] = visiting
			path = append(path, cur)
			p := parent(cur)
			if p == nil {
				break // cur is a top
			}
			cur = p
		}
		for _, x := range path {
			state[x.GetUID()] = result
			if result == reachesTop && parent(x) != nil {
				covered[x.GetUID()] = true
			}
		}
	}
	return covered
}

// enqueueMissedDeletes re-evaluates, at a kind's sync, the descendants of
// every object of that kind deleted while it was not watched (a profile
// removed and added again, a watch restarted, the kind's CRD re-created):
// such a deletion raised no event, and the objects it controlled (a
// Deployment absorbed into it) would wait for the next re-verification to be
// reported on their own. An object whose controller reference names the
// kind, by a UID none of the replayed objects has, gets the descendants
// request its owner's deletion would have made. One metadata scan, per
// sync, of the caches of the kinds whose objects have had a controller of
// that kind (kinds read live are skipped: no request); nothing is enqueued
// when no owner is missing.
func (m EventMapper) enqueueMissedDeletes(ctx context.Context, e graph.Entry, objs []client.Object, q adder) {
	if sq, ok := q.(*StandbyQueue); ok && !sq.Attached() {
		return
	}
	if e.Role == adapter.RoleReferenced {
		return // never an owner the walk passes
	}
	present := make(map[types.UID]bool, len(objs))
	for _, o := range objs {
		present[o.GetUID()] = true
	}
	gk := e.GroupKind()
	asked := map[types.UID]bool{}
	live, _ := m.Store.(graph.LiveReads)
	hints, _ := m.Store.(graph.ControllerKindHints)
	for _, child := range m.Registry.Entries() {
		if live != nil && live.ReadsLive(child) {
			continue // no cache to scan: a live list would cost requests
		}
		if hints != nil && !hints.MayBeControlledBy(child, gk) {
			continue // no object of this kind has a controller of kind e
		}
		list, err := graph.InNamespaceMetadata(ctx, m.Store, child, metav1.NamespaceAll)
		if err != nil {
			continue
		}
		for _, o := range list {
			ref := metav1.GetControllerOfNoCopy(o)
			if ref == nil || present[ref.UID] || asked[ref.UID] || graph.RefGroupKind(ref) != gk || !m.optedIn(o.GetNamespace()) {
				continue
			}
			asked[ref.UID] = true
			q.Add(Request{Op: OpDescendants, GroupKind: gk, Namespace: o.GetNamespace(), Name: ref.Name, UID: ref.UID})
		}
	}
}
