package watch

// Benchmarks of the walk, the closure and BuildReport (docs/performance.md).
// Nothing here runs without -bench: every world is built lazily, once per
// size and store, by the first benchmark that needs it.
//
//	go test -run '^$' -bench . -benchmem -count 5 ./pkg/core/

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// benchNamespace is the one namespace every benchmark object lives in: the
// walk and the closure never leave their root's namespace, so the namespace's
// population is the N that matters.
const benchNamespace = "bench"

// benchSizes are the namespace populations (unrelated objects) benchmarked.
var benchSizes = []struct {
	label string
	n     int
}{{"1k", 1_000}, {"10k", 10_000}, {"100k", 100_000}}

// Store kinds the walk and the closure are measured over.
const (
	// storeCache: controller-runtime informer caches, one per kind as the
	// Supervisor builds them, read through the Supervisor itself. Their
	// informers are fed by an in-memory ListerWatcher instead of an API
	// server; the read path (CacheReader, indexer, deep copy) is the
	// production one.
	storeCache = "cache"
	// storeFake: the controller-runtime fake client with ControllerUIDIndex,
	// as the unit tests use it. Its List evaluates the index function on
	// every object of the kind in the namespace.
	storeFake = "fake"
	// storeMemory: MemoryStore, the offline scan's store.
	storeMemory = "memory"
)

var benchStores = []string{storeCache, storeFake, storeMemory}

// --- the generated namespace ---

// benchObj is one generated object, materialised per store.
type benchObj struct {
	gvk   schema.GroupVersionKind
	name  string
	uid   types.UID
	owner *benchObj
}

// benchWorld is a namespace of n unrelated objects (fixed seed) plus the
// benchmark's own chains.
type benchWorld struct {
	objs []*benchObj
	rng  *rand.Rand
	seq  int
	// leaves[d] is the bottom of a chain whose tracked owner is d hops up;
	// leaves[0] is a Deployment with no owner.
	leaves map[int]*benchObj
	// root is a Deployment with one ReplicaSet and three pods.
	root *benchObj
	// wide[d] is a Deployment with d descendants: one ReplicaSet, d-1 pods
	// (only in the world of closureWidthNamespace objects).
	wide map[int]*benchObj
}

func (w *benchWorld) add(gvk schema.GroupVersionKind, prefix string, owner *benchObj) *benchObj {
	w.seq++
	hi, lo := w.rng.Uint64(), w.rng.Uint64()
	o := &benchObj{
		gvk:   gvk,
		name:  fmt.Sprintf("%s-%06d", prefix, w.seq),
		uid:   types.UID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", hi>>32, hi>>16&0xffff, hi&0xfff, lo>>52&0xfff, lo&0xffffffffffff)),
		owner: owner,
	}
	w.objs = append(w.objs, o)
	return o
}

// benchWorldFor is deterministic: the same n gives the same objects, names
// and UIDs. Shapes: Deployment -> ReplicaSet (sometimes an old, scaled-down
// one too) -> 1-3 Pods; StatefulSet -> 1-3 Pods; Widget -> Gear -> 1-2 Pods;
// bare Pods; ownerless Vaults.
func benchWorldFor(n int) *benchWorld {
	w := &benchWorld{rng: rand.New(rand.NewPCG(20240601, uint64(n))), leaves: map[int]*benchObj{}, wide: map[int]*benchObj{}}
	for len(w.objs) < n {
		switch r := w.rng.IntN(100); {
		case r < 45:
			d := w.add(coretest.DeployGVK, "deploy", nil)
			if w.rng.IntN(10) < 3 {
				w.add(coretest.RsGVK, "rs-old", d)
			}
			rs := w.add(coretest.RsGVK, "rs", d)
			for range 1 + w.rng.IntN(3) {
				w.add(coretest.PodGVK, "pod", rs)
			}
		case r < 60:
			s := w.add(coretest.StsGVK, "sts", nil)
			for range 1 + w.rng.IntN(3) {
				w.add(coretest.PodGVK, "pod", s)
			}
		case r < 75:
			g := w.add(coretest.GearGVK, "gear", w.add(coretest.WidgetGVK, "widget", nil))
			for range 1 + w.rng.IntN(2) {
				w.add(coretest.PodGVK, "pod", g)
			}
		case r < 90:
			w.add(coretest.PodGVK, "bare", nil)
		default:
			w.add(coretest.SecretGVK, "vault", nil)
		}
	}

	// The walk's chains.
	w.leaves[0] = w.add(coretest.DeployGVK, "lonely", nil)
	w.leaves[1] = w.add(coretest.PodGVK, "d1-pod", w.add(coretest.StsGVK, "d1-sts", nil))
	w.leaves[2] = w.add(coretest.PodGVK, "d2-pod", w.add(coretest.RsGVK, "d2-rs", w.add(coretest.DeployGVK, "d2-deploy", nil)))
	for _, depth := range []int{3, 6} {
		cur := w.add(coretest.WidgetGVK, fmt.Sprintf("d%d-widget", depth), nil)
		for range depth - 1 {
			cur = w.add(coretest.GearGVK, fmt.Sprintf("d%d-gear", depth), cur)
		}
		w.leaves[depth] = w.add(coretest.PodGVK, fmt.Sprintf("d%d-pod", depth), cur)
	}

	// The closure's roots.
	w.root = w.add(coretest.DeployGVK, "root", nil)
	rs := w.add(coretest.RsGVK, "root-rs", w.root)
	for range 3 {
		w.add(coretest.PodGVK, "root-pod", rs)
	}
	if n != closureWidthNamespace {
		return w
	}
	for _, d := range closureWidths {
		root := w.add(coretest.DeployGVK, fmt.Sprintf("wide%d", d), nil)
		rs := w.add(coretest.RsGVK, fmt.Sprintf("wide%d-rs", d), root)
		for range d - 1 {
			w.add(coretest.PodGVK, fmt.Sprintf("wide%d-pod", d), rs)
		}
		w.wide[d] = root
	}
	return w
}

// closureWidths are the descendant counts of the closure's wide roots, which
// only the world of closureWidthNamespace objects holds.
var closureWidths = []int{10, 100, 1000}

const closureWidthNamespace = 10_000

// unstructured returns the object as the core reads full objects: tracked
// kinds with a pod template, pods with a spec and a status.
func (o *benchObj) unstructured() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(o.gvk)
	u.SetNamespace(benchNamespace)
	u.SetName(o.name)
	u.SetUID(o.uid)
	u.SetResourceVersion("1")
	u.SetLabels(map[string]string{"app.kubernetes.io/name": o.name})
	if o.owner != nil {
		u.SetOwnerReferences([]metav1.OwnerReference{o.ownerRef()})
	}
	container := map[string]any{
		"name":  "main",
		"image": "registry.example.com/team/server:1.4.2",
		"args":  []any{"--port", "8080", "--model", "org/model-" + o.name},
		"env":   []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}},
	}
	switch o.gvk.Kind {
	case "Pod":
		u.Object["spec"] = map[string]any{"containers": []any{container}}
		u.Object["status"] = map[string]any{
			"phase": "Running",
			"containerStatuses": []any{map[string]any{
				"name": "main", "image": "registry.example.com/team/server:1.4.2", "ready": true,
				"imageID": "registry.example.com/team/server@sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4",
			}},
		}
	case "Deployment", "StatefulSet", "Widget":
		u.Object["spec"] = map[string]any{
			"replicas": int64(2),
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": o.name}},
				"spec":     map[string]any{"containers": []any{container}},
			},
		}
	}
	return u
}

// metadata returns the object as the core reads walk-only kinds.
func (o *benchObj) metadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(o.gvk)
	m.SetNamespace(benchNamespace)
	m.SetName(o.name)
	m.SetUID(o.uid)
	m.SetResourceVersion("1")
	m.SetLabels(map[string]string{"app.kubernetes.io/name": o.name})
	if o.owner != nil {
		m.SetOwnerReferences([]metav1.OwnerReference{o.ownerRef()})
	}
	return m
}

func (o *benchObj) ownerRef() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: o.owner.gvk.GroupVersion().String(), Kind: o.owner.gvk.Kind,
		Name: o.owner.name, UID: o.owner.uid, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// --- stores ---

// benchEnv is one world in one store.
type benchEnv struct {
	world *benchWorld
	reg   *graph.Registry
	store *coretest.CountingStore
	// objs holds the world's objects in the form the store returns them,
	// to hand the walk and the closure their starting object.
	objs  map[*benchObj]client.Object
	setup time.Duration
	// fakeClient: the store is the fake client.
	fakeClient bool
}

type benchEnvKey struct {
	store string
	n     int
}

var (
	benchMu     sync.Mutex
	benchEnvs   = map[benchEnvKey]*benchEnv{}
	benchWorlds = map[int]*benchWorld{}
)

// envFor builds (once per process) the world of size n in the given store.
func envFor(b *testing.B, store string, n int) *benchEnv {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	key := benchEnvKey{store, n}
	if env, ok := benchEnvs[key]; ok {
		return env
	}
	w, ok := benchWorlds[n]
	if !ok {
		w = benchWorldFor(n)
		benchWorlds[n] = w
	}
	reg := coretest.TestRegistry(b)
	env := &benchEnv{world: w, reg: reg, objs: make(map[*benchObj]client.Object, len(w.objs))}
	start := time.Now()
	var s graph.Store
	switch store {
	case storeMemory:
		objs := make([]client.Object, len(w.objs))
		for i, o := range w.objs {
			objs[i] = o.unstructured()
			env.objs[o] = objs[i]
		}
		s = graph.NewMemoryStore(objs)
	case storeFake:
		s = fakeStore(b, reg, w, env)
		env.fakeClient = true
	case storeCache:
		s = supervisorStore(b, reg, w, env)
	default:
		b.Fatalf("unknown store %q", store)
	}
	env.setup = time.Since(start)
	b.Logf("%s store of %d objects built in %s", store, len(w.objs), env.setup.Round(time.Millisecond))
	env.store = &coretest.CountingStore{Store: s}
	benchEnvs[key] = env
	return env
}

// readForm returns the object in the form the core reads its kind in.
func readForm(reg *graph.Registry, o *benchObj) client.Object {
	e, ok := reg.Lookup(o.gvk.GroupKind())
	if ok && !graph.NeedsFullObject(e) {
		return o.metadata()
	}
	return o.unstructured()
}

func fakeStore(b *testing.B, reg *graph.Registry, w *benchWorld, env *benchEnv) graph.Store {
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, e := range reg.Entries() {
		mapper.Add(e.GVK(), meta.RESTScopeNamespace)
	}
	objs := make([]client.Object, len(w.objs))
	for i, o := range w.objs {
		objs[i] = o.unstructured()
		env.objs[o] = readForm(reg, o)
	}
	fb := fake.NewClientBuilder().WithScheme(coretest.TestScheme()).WithRESTMapper(mapper).WithObjects(objs...)
	for _, e := range reg.Entries() {
		fb = fb.WithIndex(graph.NewObject(e), graph.ControllerUIDIndex, graph.ControllerUID)
	}
	return graph.ReaderStore{Reader: fb.Build()}
}

// supervisorStore builds one informer cache per registered kind, configured
// as Supervisor.start configures them, and returns a synced Supervisor
// reading them. The informers list the world's objects from memory and then
// watch nothing.
func supervisorStore(b *testing.B, reg *graph.Registry, w *benchWorld, env *benchEnv) graph.Store {
	byKind := map[schema.GroupKind][]*benchObj{}
	for _, o := range w.objs {
		byKind[o.gvk.GroupKind()] = append(byKind[o.gvk.GroupKind()], o)
		env.objs[o] = readForm(reg, o)
	}
	sup := &Supervisor{Registry: reg}
	sup.init()
	for _, e := range reg.Entries() {
		startMemoryCache(b, sup, e, listOf(e, byKind[e.GroupKind()]))
	}
	return sup
}

// startMemoryCache starts one kind's informer cache, configured as
// Supervisor.start configures it, over a fixed list, and hands it to the
// supervisor as synced. The cache lives as long as the process.
func startMemoryCache(tb testing.TB, sup *Supervisor, e graph.Entry, list runtime.Object) {
	tb.Helper()
	ctx := context.Background()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(e.GVK(), meta.RESTScopeNamespace)
	listGVK := e.GVK()
	listGVK.Kind += "List"
	mapper.Add(listGVK, meta.RESTScopeNamespace)
	lw := &memoryListerWatcher{list: list}
	var inf toolscache.SharedIndexInformer
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{
		HTTPClient:                  http.DefaultClient,
		Scheme:                      coretest.TestScheme(),
		Mapper:                      mapper,
		DefaultTransform:            sup.transform(e),
		ReaderFailOnMissingInformer: true,
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
			inf = toolscache.NewSharedIndexInformer(lw, obj, resync, idx)
			return inf
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, graph.NewObject(e), cache.BlockUntilSynced(false)); err != nil {
		tb.Fatal(err)
	}
	if err := inf.AddIndexers(toolscache.Indexers{controllerIndex: controllerIndexFunc}); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		tb.Fatalf("cache of %s did not sync", e.Kind)
	}
	kw := &kindWatch{entry: e, informer: inf, cancel: func() {}, owners: sup.ownerKindsOf(e.GroupKind())}
	kw.synced.Store(true)
	sup.mu.Lock()
	sup.kinds[e.GroupKind()] = kw
	sup.mu.Unlock()
}

func listOf(e graph.Entry, objs []*benchObj) runtime.Object {
	gvk := e.GVK()
	gvk.Kind += "List"
	if graph.NeedsFullObject(e) {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk)
		l.SetResourceVersion("1")
		for _, o := range objs {
			l.Items = append(l.Items, *o.unstructured())
		}
		return l
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(gvk)
	l.SetResourceVersion("1")
	for _, o := range objs {
		l.Items = append(l.Items, *o.metadata())
	}
	return l
}

// memoryListerWatcher lists a fixed list and then watches nothing.
type memoryListerWatcher struct{ list runtime.Object }

func (m *memoryListerWatcher) List(metav1.ListOptions) (runtime.Object, error) {
	return m.list.DeepCopyObject(), nil
}

func (m *memoryListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// IsWatchListSemanticsUnSupported makes the reflector list, then watch.
func (m *memoryListerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

func sizeAndStores(b *testing.B, fn func(b *testing.B, env *benchEnv)) {
	for _, store := range benchStores {
		b.Run("store="+store, func(b *testing.B) {
			for _, size := range benchSizes {
				b.Run("objects="+size.label, func(b *testing.B) {
					fn(b, envFor(b, store, size.n))
				})
			}
		})
	}
}

func reportReads(b *testing.B, s *coretest.CountingStore, gets, lists int) {
	b.ReportMetric(float64(s.Gets-gets)/float64(b.N), "gets/op")
	b.ReportMetric(float64(s.Lists-lists)/float64(b.N), "lists/op")
}

// --- benchmarks ---

// BenchmarkWalk: Walker.TrackedOwner from the bottom of a chain whose
// tracked owner is depth hops up. depth=0 is a workload with no controller
// owner, the common case: no read, no allocation.
func BenchmarkWalk(b *testing.B) {
	ctx := context.Background()
	sizeAndStores(b, func(b *testing.B, env *benchEnv) {
		for _, depth := range []int{0, 1, 2, 3, 6} {
			b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
				walker := graph.Walker{Registry: env.reg, Store: env.store}
				leaf := env.objs[env.world.leaves[depth]]
				res := walker.TrackedOwner(ctx, leaf)
				if res.Hops != depth || (depth > 0) != (res.Owner != nil) {
					b.Fatalf("walk from %s: %+v, want %d hops", leaf.GetName(), res, depth)
				}
				gets, lists := env.store.Gets, env.store.Lists
				b.ReportAllocs()
				for b.Loop() {
					res = walker.TrackedOwner(ctx, leaf)
				}
				reportReads(b, env.store, gets, lists)
			})
		}
	})
}

// BenchmarkClosure: Closure.Descendants of a Deployment with one ReplicaSet
// and three pods, in namespaces of growing population.
func BenchmarkClosure(b *testing.B) {
	ctx := context.Background()
	sizeAndStores(b, func(b *testing.B, env *benchEnv) {
		if env.fakeClient && len(env.world.objs) > 50_000 {
			// The fake client's List converts and filters every object of
			// the kind in the namespace: ~80s per closure at this size.
			b.Skip("fake client: List scans the whole namespace; closure at this size not measured")
		}
		closure := graph.Closure{Registry: env.reg, Store: env.store}
		root := env.objs[env.world.root]
		d, err := closure.Descendants(ctx, root)
		if err != nil || len(d.Pods) != 3 {
			b.Fatalf("closure of the root: %d pods, %v", len(d.Pods), err)
		}
		gets, lists := env.store.Gets, env.store.Lists
		b.ReportAllocs()
		for b.Loop() {
			d, err = closure.Descendants(ctx, root)
		}
		reportReads(b, env.store, gets, lists)
	})
}

// BenchmarkClosureWidth: Closure.Descendants of a Deployment with 10, 100
// and 1000 descendants (one ReplicaSet, the rest pods) in a namespace of 10k
// objects.
func BenchmarkClosureWidth(b *testing.B) {
	ctx := context.Background()
	for _, store := range benchStores {
		b.Run("store="+store, func(b *testing.B) {
			if store == storeFake {
				// Each of the closure's lists converts and filters every
				// object of the kind in the namespace: ~23s per closure of
				// 10 descendants here, growing with descendants times
				// namespace.
				b.Skip("fake client: List scans the whole namespace; not measured")
			}
			env := envFor(b, store, closureWidthNamespace)
			for _, width := range closureWidths {
				b.Run(fmt.Sprintf("descendants=%d", width), func(b *testing.B) {
					closure := graph.Closure{Registry: env.reg, Store: env.store}
					root := env.objs[env.world.wide[width]]
					d, err := closure.Descendants(ctx, root)
					if err != nil || len(d.Pods) != width-1 {
						b.Fatalf("closure of %s: %d pods, %v", root.GetName(), len(d.Pods), err)
					}
					gets, lists := env.store.Gets, env.store.Lists
					b.ReportAllocs()
					for b.Loop() {
						d, err = closure.Descendants(ctx, root)
					}
					reportReads(b, env.store, gets, lists)
				})
			}
		})
	}
}
