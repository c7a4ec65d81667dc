package graph

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadMemo memoises live reads of the kinds on the fallback for as long as
// the context that carries it: each kind's namespace is listed at most once,
// and an object read once is not read again. The closure puts one in its
// context when it finds none, so that a root reconcile costs at most one
// list per such kind. A memo may serve stale objects: it must not outlive
// one reconcile or one event.
type ReadMemo struct {
	mu    sync.Mutex
	lists map[memoKey]*memoList
	gets  map[memoKey]*memoGet
}

type memoKey struct {
	gk              schema.GroupKind
	namespace, name string
}

// memoList is one list, read by the first caller; ready closes when it is
// in.
type memoList struct {
	ready chan struct{}
	objs  []client.Object
	err   error
	// byName indexes objs by namespace and name.
	byName map[types.NamespacedName]client.Object
}

type memoGet struct {
	once sync.Once
	obj  client.Object
	err  error
}

type readMemoKey struct{}

// WithReadMemo returns a context carrying a new ReadMemo.
func WithReadMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, readMemoKey{}, &ReadMemo{})
}

func ReadMemoFrom(ctx context.Context) *ReadMemo {
	m, _ := ctx.Value(readMemoKey{}).(*ReadMemo)
	return m
}

// List returns the memoised list of a kind's namespace, listing it once.
func (m *ReadMemo) List(gk schema.GroupKind, namespace string, fetch func() ([]client.Object, error)) ([]client.Object, error) {
	if m == nil {
		return fetch()
	}
	key := memoKey{gk: gk, namespace: namespace}
	m.mu.Lock()
	l, listing := m.lists[key], false
	if l == nil {
		if m.lists == nil {
			m.lists = map[memoKey]*memoList{}
		}
		l, listing = &memoList{ready: make(chan struct{})}, true
		m.lists[key] = l
	}
	m.mu.Unlock()
	if listing {
		l.objs, l.err = fetch()
		l.byName = make(map[types.NamespacedName]client.Object, len(l.objs))
		for _, o := range l.objs {
			l.byName[types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}] = o
		}
		close(l.ready)
	}
	<-l.ready
	return l.objs, l.err
}

// Lookup returns an object from a memoised list of its namespace (or of
// every namespace), nil when no such list was read or it does not hold it.
func (m *ReadMemo) Lookup(gk schema.GroupKind, namespace, name string) client.Object {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	l := m.lists[memoKey{gk: gk, namespace: namespace}]
	if l == nil && namespace != metav1.NamespaceAll {
		l = m.lists[memoKey{gk: gk, namespace: metav1.NamespaceAll}]
	}
	m.mu.Unlock()
	if l == nil {
		return nil
	}
	<-l.ready // a list in flight
	if l.err != nil {
		return nil
	}
	return l.byName[types.NamespacedName{Namespace: namespace, Name: name}]
}

// Get returns the memoised object, reading it once.
func (m *ReadMemo) Get(gk schema.GroupKind, namespace, name string, fetch func() (client.Object, error)) (client.Object, error) {
	if m == nil {
		return fetch()
	}
	key := memoKey{gk: gk, namespace: namespace, name: name}
	m.mu.Lock()
	g := m.gets[key]
	if g == nil {
		if m.gets == nil {
			m.gets = map[memoKey]*memoGet{}
		}
		g = &memoGet{}
		m.gets[key] = g
	}
	m.mu.Unlock()
	g.once.Do(func() { g.obj, g.err = fetch() })
	return g.obj, g.err
}
