package graph_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FuzzWalk decodes an arbitrary ownerReference graph from the fuzzer's bytes
// (objects of tracked, walk-only and undeclared kinds in two namespaces,
// sharing a few names, with 0-3 ownerReferences each whose kind, apiVersion,
// name, UID and controller flag may be right, wrong, malformed or absent)
// and walks up from every object. The walk must not panic, must terminate
// within a bounded number of reads, must never exceed MaxWalkDepth hops, and
// an owner it returns must be of a tracked kind, in the object's own
// namespace, and reachable through exactly Hops controller references, each
// matching the owner it names by kind, name and UID. An independent walk
// (the oracle below) must agree with it.
//
//	go test ./pkg/core -run '^$' -fuzz '^FuzzWalk$' -fuzztime 30s
func FuzzWalk(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		// a Deployment with a ReplicaSet and a Pod: every ref right
		{3, 1, 0, 0, 0, 0, 3, 1, 1, 1, 0, 0, 0, 0, 5, 2, 0, 1, 1, 1, 0, 0, 0, 0},
		// a two-object cycle
		{2, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
		// a chain of Gears past the depth cap
		{9, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 4, 2, 0, 1, 0, 0, 0, 0, 4, 3, 0, 1, 0, 0, 0, 0, 4, 4, 0, 1, 0, 0, 0, 0,
			4, 5, 0, 1, 0, 0, 0, 0, 4, 6, 0, 1, 0, 0, 0, 0, 4, 7, 0, 1, 0, 0, 0, 0, 4, 8, 0, 1, 0, 0, 0, 0, 2, 9, 0, 1, 0, 0, 0, 0},
		// forged UID, wrong name, other namespace, bad apiVersion
		{4, 0, 0, 0, 0, 1, 1, 1, 0, 0, 9, 0, 1, 2, 1, 1, 0, 0, 0, 9, 0, 5, 3, 0, 1, 0, 9, 0, 0, 5, 0, 0, 2, 0, 1, 1, 1, 1},
	} {
		f.Add(seed)
	}
	reg := coretest.TestRegistry(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		objs := decodeGraph(data)
		checkWalk(t, reg, objs)
	})
}

// Fuzz graphs use these kinds (tracked, walk-only, undeclared), names and
// namespaces: few names and two namespaces, so that references collide.
var (
	fuzzKinds = []schema.GroupVersionKind{coretest.WidgetGVK, coretest.DeployGVK,
		// tracked
		coretest.StsGVK, coretest.RsGVK, coretest.GearGVK,

		// walk-only
		coretest.PodGVK, coretest.SecretGVK, {Group: "unknown.io", Version: "v1", Kind: "Thing"}, // no adapter declares it
	}
	fuzzNames      = []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	fuzzNamespaces = []string{"ns", "other"}
)

// byteReader hands out the fuzzer's bytes, then zeros.
type byteReader struct {
	data []byte
	i    int
}

func (r *byteReader) next() int {
	if r.i >= len(r.data) {
		return 0
	}
	b := r.data[r.i]
	r.i++
	return int(b)
}

// decodeGraph reads up to 32 objects. Per object: kind, name, namespace,
// reference count (0-3), a UID flag (non-zero: reuse an earlier object's
// UID, a forged duplicate); per reference: target object, then how its
// kind, apiVersion, name, UID and controller flag deviate from the target.
// Objects whose kind, namespace and name repeat an earlier one are skipped,
// as the API server would refuse them.
func decodeGraph(data []byte) []client.Object {
	r := &byteReader{data: data}
	n := r.next() % 33
	type pending struct {
		obj  *unstructured.Unstructured
		refs [][6]int
	}
	var all []pending
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		gvk := fuzzKinds[r.next()%len(fuzzKinds)]
		name := fuzzNames[r.next()%len(fuzzNames)]
		namespace := fuzzNamespaces[r.next()%len(fuzzNamespaces)]
		nrefs := r.next() % 4
		uidFrom := r.next()
		var refs [][6]int
		for j := 0; j < nrefs; j++ {
			refs = append(refs, [6]int{r.next(), r.next(), r.next(), r.next(), r.next(), r.next()})
		}
		key := gvk.String() + "/" + namespace + "/" + name
		if seen[key] {
			continue
		}
		seen[key] = true
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(gvk)
		o.SetNamespace(namespace)
		o.SetName(name)
		uid := types.UID(fmt.Sprintf("uid-%d", i))
		if uidFrom != 0 && len(all) > 0 {
			uid = all[uidFrom%len(all)].obj.GetUID()
		}
		o.SetUID(uid)
		all = append(all, pending{o, refs})
	}
	out := make([]client.Object, 0, len(all))
	for _, p := range all {
		var refs []metav1.OwnerReference
		for _, spec := range p.refs {
			target := all[spec[0]%len(all)].obj
			tgvk := target.GroupVersionKind()
			ref := metav1.OwnerReference{
				APIVersion: tgvk.GroupVersion().String(), Kind: tgvk.Kind, Name: target.GetName(), UID: target.GetUID(),
			}
			switch spec[1] % 8 { // the kind
			case 1:
				k := fuzzKinds[spec[1]%len(fuzzKinds)]
				ref.APIVersion, ref.Kind = k.GroupVersion().String(), k.Kind
			case 2:
				ref.Kind = fuzzKinds[spec[1]%len(fuzzKinds)].Kind // another kind, the target's group
			}
			switch spec[2] % 8 { // the apiVersion
			case 1:
				ref.APIVersion = "a/b/c" // malformed
			case 2:
				ref.APIVersion = ""
			case 3:
				ref.APIVersion = tgvk.Group + "/v999"
			}
			if spec[3]%6 == 1 { // the name
				ref.Name = fuzzNames[spec[3]%len(fuzzNames)]
			}
			switch spec[4] % 8 { // the UID
			case 1:
				ref.UID = types.UID("forged")
			case 2:
				ref.UID = ""
			}
			switch spec[5] % 4 { // the controller flag
			case 0, 1:
				ref.Controller = ptr.To(true)
			case 2:
				ref.Controller = ptr.To(false)
			}
			refs = append(refs, ref)
		}
		p.obj.SetOwnerReferences(refs)
		out = append(out, p.obj)
	}
	return out
}

// boundedStore fails loudly once the walk reads more than a bound: a walk
// that does not terminate shows as a test failure, not a hang.
type boundedStore struct {
	graph.Store
	gets, limit int64
}

func (s *boundedStore) Get(ctx context.Context, e graph.Entry, namespace, name string) (client.Object, error) {
	if atomic.AddInt64(&s.gets, 1) > s.limit {
		panic(fmt.Sprintf("walk read more than %d objects", s.limit))
	}
	return s.Store.Get(ctx, e, namespace, name)
}

var walkReasons = map[string]bool{graph.ReasonRoot: true, graph.ReasonUntrackedKind: true, graph.ReasonNotFound: true, graph.ReasonForbidden: true, graph.ReasonNoMatch: true, graph.ReasonUIDMismatch: true, graph.ReasonDepthCap: true, graph.ReasonCycle: true, graph.ReasonError: true}

func checkWalk(t *testing.T, reg *graph.Registry, objs []client.Object) {
	t.Helper()
	mem := graph.NewMemoryStore(objs)
	// TrackedOwner reads at most MaxWalkDepth owners plus one chain of
	// maxClimb; Root repeats it at most once per object.
	perWalk := int64(graph.MaxWalkDepth + graph.MaxClimb + 2)
	store := &boundedStore{Store: mem, limit: perWalk * int64(len(objs)+2)}
	walker := graph.Walker{Registry: reg, Store: store}
	ctx := context.Background()

	// The walks run in a goroutine so that one that does not terminate
	// fails the test instead of hanging it; the checks run here.
	type walked struct {
		res  graph.WalkResult
		root *graph.Owner
	}
	results := make([]walked, len(objs))
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		for i, o := range objs {
			atomic.StoreInt64(&store.gets, 0)
			results[i].res = walker.TrackedOwner(ctx, o)
			atomic.StoreInt64(&store.gets, 0)
			results[i].root = walker.Root(ctx, o)
		}
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("walk panicked: %v\n%s", p, describe(objs))
		}
	case <-time.After(time.Minute):
		t.Fatalf("walk did not terminate\n%s", describe(objs))
	}

	for i, o := range objs {
		res, root := results[i].res, results[i].root
		checkWalkResult(t, reg, mem, o, res, objs)
		if root == nil {
			require.Nil(t, res.Owner, "an object with a tracked owner has a root")
			continue
		}
		if root.Generic {
			require.Equal(t, o.GetNamespace(), root.Namespace, "a root in another namespace\n%s", describe(objs))
			continue
		}
		require.True(t, reg.IsTracked(root.GroupKind), "root %v is not tracked", root)
		require.Equal(t, o.GetNamespace(), root.Namespace, "a root in another namespace\n%s", describe(objs))
		if res.Owner == nil && reg.IsTracked(o.GetObjectKind().GroupVersionKind().GroupKind()) {
			require.Equal(t, string(o.GetUID()), root.UID, "a tracked object without a tracked owner is its own root")
		}
		_, err := mem.Get(ctx, mustLookup(t, reg, root.GroupKind), root.Namespace, root.Name)
		require.NoError(t, err, "the root exists")
	}
}

func mustLookup(t *testing.T, reg *graph.Registry, gk schema.GroupKind) graph.Entry {
	t.Helper()
	e, ok := reg.Lookup(gk)
	require.True(t, ok, "%s is registered", gk)
	return e
}

// checkWalkResult compares a walk with the oracle.
func checkWalkResult(t *testing.T, reg *graph.Registry, store graph.Store, obj client.Object, res graph.WalkResult, objs []client.Object) {
	t.Helper()
	forest := describe(objs)
	require.GreaterOrEqual(t, res.Hops, 0)
	require.LessOrEqual(t, res.Hops, graph.MaxWalkDepth, "the walk never exceeds MaxWalkDepth hops")
	want, hops := oracleOwner(reg, store, obj)
	if res.Owner != nil && res.Owner.Generic {
		require.Equal(t, obj.GetNamespace(), res.Owner.Namespace, "never another namespace")
		if !uniqueUIDs(objs) {
			// Two objects with one UID cannot exist in a cluster; which
			// of them a UID-checked chain reaches is not the oracle's to
			// say.
			return
		}
		require.Nil(t, want, "a generic owner although the oracle finds a tracked one\n%s", forest)
		top := oracleGenericRoot(reg, store, obj)
		require.NotNil(t, top, "the walk returned generic %+v; the oracle finds none\n%s", res.Owner, forest)
		require.Equal(t, top.UID, res.Owner.UID, "generic root by UID\n%s", forest)
		require.Equal(t, top.Unread, res.Owner.Unread, forest)
		require.Equal(t, obj.GetNamespace(), res.Owner.Namespace, "never another namespace")
		return
	}
	if res.Owner == nil {
		require.True(t, walkReasons[res.Reason], "unknown reason %q", res.Reason)
		if want != nil {
			// The only owner the walk may refuse is one whose own chain
			// leads back to the object (a cycle).
			require.Equal(t, graph.ReasonCycle, res.Reason, "the walk missed %s %s at hop %d\n%s", want.GetObjectKind().GroupVersionKind().Kind, want.GetName(), hops, forest)
			require.Equal(t, hops, res.Hops)
		}
		return
	}
	require.Empty(t, res.Reason)
	require.NotNil(t, want, "the walk returned %+v; the oracle finds no tracked owner\n%s", res.Owner, forest)
	require.True(t, reg.IsTracked(res.Owner.GroupKind))
	require.Equal(t, obj.GetNamespace(), res.Owner.Namespace, "never another namespace")
	require.Equal(t, want.GetObjectKind().GroupVersionKind().GroupKind(), res.Owner.GroupKind)
	require.Equal(t, want.GetName(), res.Owner.Name)
	require.Equal(t, string(want.GetUID()), res.Owner.UID, "the owner is the object the references name, by UID\n%s", forest)
	require.Equal(t, hops, res.Hops, forest)
}

// uniqueUIDs reports whether no two objects share a UID.
func uniqueUIDs(objs []client.Object) bool {
	seen := map[types.UID]bool{}
	for _, o := range objs {
		if seen[o.GetUID()] {
			return false
		}
		seen[o.GetUID()] = true
	}
	return true
}

// oracleGenericRoot follows controller references from obj through kinds
// that are not tracked: an unregistered kind's reference is the root as
// named; otherwise the topmost object read whose own controller is absent,
// or unreadable. Nil when the chain breaks (an owner missing or re-created),
// reaches a tracked kind or the depth cap, or when obj itself is the top.
func oracleGenericRoot(reg *graph.Registry, store graph.Store, obj client.Object) *graph.Owner {
	cur := obj
	var top *graph.Owner
	for hop := 1; hop <= graph.MaxWalkDepth+1; hop++ {
		var ref *metav1.OwnerReference
		for i, r := range cur.GetOwnerReferences() {
			if r.Controller != nil && *r.Controller {
				ref = &cur.GetOwnerReferences()[i]
				break
			}
		}
		if ref == nil {
			return top
		}
		if hop > graph.MaxWalkDepth {
			return nil
		}
		e, ok := reg.Lookup(graph.RefGroupKind(ref))
		if !ok {
			if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Version == "" {
				// A malformed reference to a kind no adapter declares ends
				// the chain below it (one to a registered kind is followed
				// by its group and kind, as the closure matches it).
				return top
			}
			return &graph.Owner{UID: string(ref.UID), Unread: true, Generic: true}
		}
		owner, err := store.Get(context.Background(), e, obj.GetNamespace(), ref.Name)
		if err != nil || owner.GetUID() != ref.UID || e.Tracked() {
			return nil
		}
		top = &graph.Owner{UID: string(owner.GetUID()), Generic: true}
		cur = owner
	}
	return nil
}

// oracleOwner follows controller references from obj the slow, obvious way:
// at each hop the first reference with controller=true, an owner of a
// registered kind fetched by name in obj's namespace, its UID equal to the
// reference's. It returns the first tracked owner and its hop, or nil.
func oracleOwner(reg *graph.Registry, store graph.Store, obj client.Object) (client.Object, int) {
	cur := obj
	for hop := 1; hop <= graph.MaxWalkDepth; hop++ {
		var ref *metav1.OwnerReference
		for i, r := range cur.GetOwnerReferences() {
			if r.Controller != nil && *r.Controller {
				ref = &cur.GetOwnerReferences()[i]
				break
			}
		}
		if ref == nil {
			return nil, 0
		}
		group := ""
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
			group = gv.Group
		}
		e, ok := reg.Lookup(schema.GroupKind{Group: group, Kind: ref.Kind})
		if !ok {
			return nil, 0
		}
		owner, err := store.Get(context.Background(), e, obj.GetNamespace(), ref.Name)
		if err != nil || owner.GetUID() != ref.UID {
			return nil, 0
		}
		if e.Tracked() {
			return owner, hop
		}
		cur = owner
	}
	return nil, 0
}
