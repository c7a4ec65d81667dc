package watch

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// scriptedLW is a list-watch whose lists the test scripts: each call runs
// the next step (which may block), and returns its objects.
type scriptedLW struct {
	mu    sync.Mutex
	steps []func() []metav1.PartialObjectMetadata
	calls atomic.Int32
}

func (l *scriptedLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	var step func() []metav1.PartialObjectMetadata
	if len(l.steps) > 0 {
		step, l.steps = l.steps[0], l.steps[1:]
	}
	l.mu.Unlock()
	l.calls.Add(1)
	list := &metav1.PartialObjectMetadataList{}
	if step != nil {
		list.Items = step()
	}
	return list, nil
}

func (l *scriptedLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// listThenWatch makes the reflector list, then watch (no initial events
// stream, which the fake watch does not end).
type listThenWatch struct{ *toolscache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

type nsEvents struct{ changed atomic.Int32 }

func (e *nsEvents) Handler(context.Context, graph.Entry) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{}
}
func (e *nsEvents) Replay(context.Context, graph.Entry, []client.Object) {}
func (e *nsEvents) Reconcile(schema.GroupKind, string, string)           {}
func (e *nsEvents) NamespaceChanged(string)                              { e.changed.Add(1) }
func (e *nsEvents) Leading() bool                                        { return true }

// fillFixture is a supervisor with one watched walk-only kind (ReplicaSet,
// cached as metadata) whose informer runs over a fake watch, and whose
// opt-in fills list through lists.
type fillFixture struct {
	s      *Supervisor
	kw     *kindWatch
	events *nsEvents
	lists  *scriptedLW
	watch  *watch.FakeWatcher
}

func newFillFixture(t *testing.T) *fillFixture {
	t.Helper()
	reg := coretest.TestRegistry(t)
	e, ok := reg.Lookup(coretest.RsGVK.GroupKind())
	require.True(t, ok)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	set := NewNamespaceSet()
	events := &nsEvents{}
	s := &Supervisor{Registry: reg, Namespaces: set, Events: events, kinds: map[schema.GroupKind]*kindWatch{}}
	s.runCtx.Store(&ctx)
	s.FollowNamespaces()
	fw := watch.NewFake()
	informerLW := listThenWatch{&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &metav1.PartialObjectMetadataList{}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fw, nil },
	}}
	kw := &kindWatch{entry: e, owners: s.ownerKindsOf(e.GroupKind())}
	kw.informer = toolscache.NewSharedIndexInformer(informerLW, &metav1.PartialObjectMetadata{}, 0,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	lists := &scriptedLW{}
	kw.lw = &guardedListWatch{lw: lists, hooks: watchHooks{admit: set.Admitted}}
	_, err := kw.informer.AddEventHandler(s.admissionHandler(kw))
	require.NoError(t, err)
	go kw.informer.Run(ctx.Done())
	require.Eventually(t, kw.informer.HasSynced, 10*time.Second, time.Millisecond)
	kw.synced.Store(true)
	s.kinds[e.GroupKind()] = kw
	return &fillFixture{s: s, kw: kw, events: events, lists: lists, watch: fw}
}

func rsMeta(ns, name, uid string) metav1.PartialObjectMetadata {
	m := metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(coretest.RsGVK)
	m.SetNamespace(ns)
	m.SetName(name)
	m.SetUID(types.UID(uid))
	return m
}

func nsObj(name string, optedIn bool) *corev1.Namespace {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if optedIn {
		n.Labels = map[string]string{graph.OptInLabel: "true"}
	}
	return n
}

// #29 item 4: opting in, out and in again while the first fill still lists:
// the first fill, when it ends, does not mark the namespace ready while the
// second is still listing; the second does.
func TestAnOldOptInFillCannotMarkANewerOneReady(t *testing.T) {
	f := newFillFixture(t)
	first, second := make(chan struct{}), make(chan struct{})
	f.lists.steps = []func() []metav1.PartialObjectMetadata{
		func() []metav1.PartialObjectMetadata {
			<-first
			return []metav1.PartialObjectMetadata{rsMeta("a", "old", "u-old")}
		},
		func() []metav1.PartialObjectMetadata { <-second; return nil },
	}
	h := f.s.Namespaces.Handler()
	h.OnAdd(nsObj("a", true), false)
	require.Eventually(t, func() bool { return f.lists.calls.Load() == 1 }, 10*time.Second, time.Millisecond)
	h.OnUpdate(nsObj("a", true), nsObj("a", false))
	h.OnUpdate(nsObj("a", false), nsObj("a", true))
	require.Eventually(t, func() bool { return f.lists.calls.Load() == 2 }, 10*time.Second, time.Millisecond)

	close(first)
	time.Sleep(100 * time.Millisecond) // the first fill ends (nothing to wait for: it must not change anything)
	require.False(t, f.s.Namespaces.OptedIn("a"), "ready on a half-filled cache: the first fill marked the second's namespace")
	_, exists, _ := f.kw.informer.GetIndexer().GetByKey("a/old")
	require.False(t, exists, "a stale fill writes nothing")

	close(second)
	require.Eventually(t, func() bool { return f.s.Namespaces.OptedIn("a") }, 10*time.Second, time.Millisecond)
}

// #29 item 5: an object deleted between the fill's list and its write into
// the cache does not come back.
func TestAFillDoesNotResurrectAnObjectDeletedAfterItsList(t *testing.T) {
	f := newFillFixture(t)
	gone := rsMeta("a", "gone", "u-gone")
	kept := rsMeta("a", "kept", "u-kept")
	f.lists.steps = []func() []metav1.PartialObjectMetadata{func() []metav1.PartialObjectMetadata {
		// Deleted after the list was taken, before the fill writes: its
		// watch event reaches the informer first.
		f.watch.Delete(gone.DeepCopy())
		require.Eventually(t, func() bool { return f.kw.fills.deleted("u-gone") }, 10*time.Second, time.Millisecond)
		return []metav1.PartialObjectMetadata{gone, kept}
	}}
	f.s.Namespaces.Handler().OnAdd(nsObj("a", true), false)
	require.Eventually(t, func() bool { return f.s.Namespaces.OptedIn("a") }, 10*time.Second, time.Millisecond)
	idx := f.kw.informer.GetIndexer()
	_, exists, _ := idx.GetByKey("a/kept")
	require.True(t, exists)
	_, exists, _ = idx.GetByKey("a/gone")
	require.False(t, exists, "a deleted object came back with the fill")
}
