package reconcile

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// The AIBOM informer watches AIBOMs for their metadata only, and lists them
// in full. An AIBOM event carries the whole document (several KB), and
// nearly every AIBOM event is the echo of the controller's own write: the
// controller already holds what that write stored. Decoding every echo was
// a fifth of the controller's CPU in a cold start (docs/performance.md,
// round 9), and encoding it a part of the API server's. So:
//
//   - each write of the controller (the create, the status patch) leaves,
//     once answered, what it stored under the AIBOM's UID and new
//     resourceVersion (echoMemo);
//   - a watch event whose resourceVersion is such a write, and whose
//     previous event for that AIBOM is the version the write was based on,
//     is delivered to the informer as the object the write stored: nothing
//     else can have changed it;
//   - any other event (someone else's write, a write based on a version
//     the informer had not seen, a restart) is delivered as the object the
//     API server holds at that resourceVersion, read by a list of that one
//     object at that exact version: a forged status is seen exactly as
//     before, at the cost of one read;
//   - a delete is delivered with the spec the informer's cache holds (the
//     subject to re-evaluate).
//
// An event that arrives before its write's answer waits for it (for at most
// echoWait): a write's answer follows its echo by milliseconds.

// echoWait bounds how long an event waits for the answer of a write of
// the controller in flight on the same AIBOM before it is read instead.
const echoWait = 5 * time.Second

// echoTTL is how long a write's result is kept for its echo (a watch that
// restarted may never deliver it).
const echoTTL = time.Minute

var aibomEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "aibom_aibom_watch_events_total",
	Help: "AIBOM watch events by how the object was obtained: own-write (the echo of the controller's own write, delivered from what it wrote), read (someone else's write or an unknown version, read from the API server at that version), gone (deleted before it could be read), deleted.",
}, []string{"source"})

func init() { metrics.Registry.MustRegister(aibomEvents) }

type echoKey struct {
	uid types.UID
	rv  string
}

type echo struct {
	base string // the resourceVersion the write was based on ("" for a create)
	obj  *v1alpha1.AIBOM
	at   time.Time
}

// echoMemo holds the controller's answered AIBOM writes until their echo.
type echoMemo struct {
	mu      sync.Mutex
	byRV    map[echoKey]echo
	pending map[client.ObjectKey]int
	// answered is closed (and replaced) whenever a write in flight ends.
	answered chan struct{}
	now      func() time.Time
}

func newEchoMemo() *echoMemo {
	return &echoMemo{byRV: map[echoKey]echo{}, pending: map[client.ObjectKey]int{}, answered: make(chan struct{}), now: time.Now}
}

// echoes is the process's memo: UIDs and resourceVersions are the API
// server's, so what a write stored under them is the same for every
// controller of the process.
var echoes = newEchoMemo()

// expect records a write to key about to be sent.
func (m *echoMemo) expect(key client.ObjectKey) {
	m.mu.Lock()
	m.pending[key]++
	m.mu.Unlock()
}

// answer ends a write expected on key. stored is what the write left on
// the API server (nil: failed, or not known in full), based on the
// resourceVersion base.
func (m *echoMemo) answer(key client.ObjectKey, base string, stored *v1alpha1.AIBOM) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending[key]--; m.pending[key] <= 0 {
		delete(m.pending, key)
	}
	now := m.now()
	for k, e := range m.byRV {
		if now.Sub(e.at) > echoTTL {
			delete(m.byRV, k)
		}
	}
	if stored != nil && stored.UID != "" && stored.ResourceVersion != "" {
		m.byRV[echoKey{stored.UID, stored.ResourceVersion}] = echo{base: base, obj: stored, at: now}
	}
	close(m.answered)
	m.answered = make(chan struct{})
}

// ExpectWrite records a write of the AIBOM at key about to be sent by
// this process, and returns what ends it: done(base, stored) with the
// resourceVersion the write was based on ("" for a create) and what the
// write left on the API server (nil when it failed or is not known in
// full). Its echo is then delivered from stored instead of read (echo.go).
func ExpectWrite(key client.ObjectKey) (done func(base string, stored *v1alpha1.AIBOM)) {
	echoes.expect(key)
	var once sync.Once
	return func(base string, stored *v1alpha1.AIBOM) {
		once.Do(func() { echoes.answer(key, base, stored) })
	}
}

// take returns what the controller's write stored at uid's version rv, if
// that write was based on prev (the version seen before it), waiting up to
// wait for a write to key still in flight.
func (m *echoMemo) take(key client.ObjectKey, uid types.UID, rv, prev string, wait time.Duration) (*v1alpha1.AIBOM, bool) {
	deadline := m.now().Add(wait)
	m.mu.Lock()
	for {
		if e, ok := m.byRV[echoKey{uid, rv}]; ok {
			delete(m.byRV, echoKey{uid, rv})
			m.mu.Unlock()
			return e.obj, e.base == prev
		}
		left := deadline.Sub(m.now())
		if m.pending[key] == 0 || left <= 0 {
			m.mu.Unlock()
			return nil, false
		}
		ch := m.answered
		m.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-ch:
		case <-t.C:
		}
		t.Stop()
		m.mu.Lock()
	}
}

// EchoListWatch is the AIBOM informer's list-watch (see the comment at the
// top of this file): lw lists AIBOMs in full and reads single ones; meta
// watches their metadata.
type EchoListWatch struct {
	lw   toolscache.ListerWatcherWithContext
	meta metadata.ResourceInterface
	memo *echoMemo
	wait time.Duration

	mu sync.Mutex
	// last is the resourceVersion of each AIBOM as last delivered.
	last  map[types.UID]string
	store toolscache.Store
}

// NewEchoListWatch wraps the AIBOM informer's list-watch lw; meta is the
// metadata client's AIBOM resource.
func NewEchoListWatch(lw toolscache.ListerWatcher, meta metadata.ResourceInterface) *EchoListWatch {
	return &EchoListWatch{lw: toolscache.ToListerWatcherWithContext(lw), meta: meta, memo: echoes, wait: echoWait, last: map[types.UID]string{}}
}

// SetStore gives the list-watch the informer's store, where a delete finds
// the deleted AIBOM's spec.
func (e *EchoListWatch) SetStore(s toolscache.Store) {
	e.mu.Lock()
	e.store = s
	e.mu.Unlock()
}

// IsWatchListSemanticsUnSupported makes the reflector list, then watch: a
// watch that streamed its initial list would read every AIBOM one by one.
func (e *EchoListWatch) IsWatchListSemanticsUnSupported() bool { return true }

func (e *EchoListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return e.ListWithContext(context.Background(), opts)
}

func (e *EchoListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return e.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists AIBOMs in full; the versions listed are the last
// delivered from now on.
func (e *EchoListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	out, err := e.lw.ListWithContext(ctx, opts)
	if err != nil {
		return out, err
	}
	list, ok := out.(*v1alpha1.AIBOMList)
	if !ok {
		return out, nil
	}
	last := make(map[types.UID]string, len(list.Items))
	for i := range list.Items {
		last[list.Items[i].UID] = list.Items[i].ResourceVersion
	}
	e.mu.Lock()
	if opts.Continue == "" {
		e.last = last
	} else {
		for k, v := range last {
			e.last[k] = v
		}
	}
	e.mu.Unlock()
	return out, nil
}

// WatchWithContext watches AIBOMs' metadata and delivers full AIBOMs.
func (e *EchoListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	src, err := e.meta.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &echoWatch{e: e, src: src, out: make(chan watch.Event), cancel: cancel}
	go w.run(ctx)
	return w, nil
}

type echoWatch struct {
	e      *EchoListWatch
	src    watch.Interface
	out    chan watch.Event
	cancel context.CancelFunc
	stop   sync.Once
}

func (w *echoWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *echoWatch) Stop() {
	w.stop.Do(func() {
		w.cancel()
		w.src.Stop()
	})
}

func (w *echoWatch) run(ctx context.Context) {
	defer close(w.out)
	defer w.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-w.src.ResultChan():
		case <-ctx.Done():
			return
		}
		if !ok {
			return
		}
		out, deliver, err := w.e.convert(ctx, ev)
		if err != nil {
			// The reflector watches again from the last version it was
			// given: this event comes again.
			select {
			case w.out <- watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}:
			case <-ctx.Done():
			}
			return
		}
		if !deliver {
			continue
		}
		select {
		case w.out <- out:
		case <-ctx.Done():
			return
		}
	}
}

// convert turns a metadata event into a full AIBOM event; deliver is false
// for an object deleted before it could be read (its delete follows).
func (e *EchoListWatch) convert(ctx context.Context, ev watch.Event) (watch.Event, bool, error) {
	m, ok := ev.Object.(*metav1.PartialObjectMetadata)
	if !ok {
		// An error status passes through.
		return ev, true, nil
	}
	switch ev.Type {
	case watch.Bookmark:
		return watch.Event{Type: ev.Type, Object: &v1alpha1.AIBOM{TypeMeta: aibomTypeMeta(), ObjectMeta: m.ObjectMeta}}, true, nil
	case watch.Deleted:
		e.mu.Lock()
		delete(e.last, m.UID)
		store := e.store
		e.mu.Unlock()
		a := &v1alpha1.AIBOM{TypeMeta: aibomTypeMeta(), ObjectMeta: m.ObjectMeta}
		if store != nil {
			if cached, ok, _ := store.Get(a); ok {
				if c, ok := cached.(*v1alpha1.AIBOM); ok && c.UID == a.UID {
					a.Spec = c.Spec
				}
			}
		}
		aibomEvents.WithLabelValues("deleted").Inc()
		return watch.Event{Type: ev.Type, Object: a}, true, nil
	}
	key := client.ObjectKey{Namespace: m.Namespace, Name: m.Name}
	e.mu.Lock()
	prev := e.last[m.UID]
	e.mu.Unlock()
	a, valid := e.memo.take(key, m.UID, m.ResourceVersion, prev, e.wait)
	if valid {
		aibomEvents.WithLabelValues("own-write").Inc()
	} else {
		var err error
		if a, err = e.read(ctx, key, m.ResourceVersion); err != nil {
			return ev, false, err
		}
		if a == nil {
			aibomEvents.WithLabelValues("gone").Inc()
			return ev, false, nil
		}
		aibomEvents.WithLabelValues("read").Inc()
	}
	e.mu.Lock()
	e.last[m.UID] = m.ResourceVersion
	e.mu.Unlock()
	return watch.Event{Type: ev.Type, Object: a}, true, nil
}

// read returns the AIBOM at key as it was at resourceVersion rv (or, when
// the API server no longer has that version, as it is now, under rv: the
// informer then holds a newer state, which the next event delivers again);
// nil if it is gone.
func (e *EchoListWatch) read(ctx context.Context, key client.ObjectKey, rv string) (*v1alpha1.AIBOM, error) {
	sel := fields.AndSelectors(fields.OneTermEqualSelector("metadata.namespace", key.Namespace), fields.OneTermEqualSelector("metadata.name", key.Name)).String()
	out, err := e.lw.ListWithContext(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		out, err = e.lw.ListWithContext(ctx, metav1.ListOptions{FieldSelector: sel})
	}
	if err != nil {
		return nil, fmt.Errorf("read AIBOM %s at resourceVersion %s: %w", key, rv, err)
	}
	list, ok := out.(*v1alpha1.AIBOMList)
	if !ok {
		return nil, fmt.Errorf("read AIBOM %s: unexpected list type %T", key, out)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	a := &list.Items[0]
	a.TypeMeta = aibomTypeMeta()
	a.ResourceVersion = rv
	return a, nil
}

func aibomTypeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "AIBOM"}
}
