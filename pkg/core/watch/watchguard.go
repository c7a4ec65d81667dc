package watch

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The watch guard replaces polling with the watch machinery itself. Every
// informer of the controller lists and watches through it:
//
//   - a watch is asked to last long (WatchGuard.Timeout, instead of
//     client-go's 5 to 10 minutes), so that an idle controller does not
//     renew its watches every few minutes;
//   - every event a watch delivers, bookmarks included, is progress. The API
//     server sends each watch a bookmark about once a minute even when
//     nothing changes; a watch that delivers nothing for WatchGuard.Deadline
//     has stopped silently (a connection a middlebox holds open, a stuck
//     proxy), and the guard stops it: its reflector opens a new watch from
//     the last resource version it saw, and relists only when the API
//     server no longer has that version;
//   - objects of namespaces the admit function refuses are dropped before
//     they reach the informer (see Supervisor: caches follow opt-in).
//
// Nothing here sends a request: the deadline is checked on a local timer.

var watchRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "aibom_watch_restarts_total",
	Help: "Watches stopped by the controller because they delivered no event and no bookmark within the watch progress deadline (a silently stopped watch); the informer resumes from its last resource version.",
}, []string{"resource"})

func init() { metrics.Registry.MustRegister(watchRestarts) }

// DefaultWatchProgressDeadline is how long a watch may deliver neither an
// event nor a bookmark before it is considered stopped: three of the API
// server's one-minute bookmark periods.
const DefaultWatchProgressDeadline = 3 * time.Minute

// DefaultInitialEventsDeadline is how long a watch that streams its initial
// list may stay silent: the API server sends the first object, or the
// bookmark that ends an empty list, at once. One that sends nothing (a
// conversion webhook that fails every object) is restarted, and its kind
// reported unhealthy, after this long.
const DefaultInitialEventsDeadline = 15 * time.Second

// DefaultWatchTimeout is the least server-side timeout the guard asks of a
// watch (the actual one is random between it and twice it). client-go's own
// default (5 minutes) would renew every watch several times an hour with
// nothing to do; the progress deadline is what catches a broken one.
const DefaultWatchTimeout = 30 * time.Minute

// WatchGuard wraps informers' list-watches (see the package comment above).
// The zero value uses the defaults; a guard starts its timer with its first
// watch and keeps it for the life of the process.
type WatchGuard struct {
	// Deadline is the watch progress deadline (default
	// DefaultWatchProgressDeadline; negative: never stop a watch).
	Deadline time.Duration
	// InitialDeadline is the deadline of a watch still streaming its
	// initial list (default DefaultInitialEventsDeadline).
	InitialDeadline time.Duration
	// Timeout is the least server-side watch timeout asked for (default
	// DefaultWatchTimeout; negative: client-go's own).
	Timeout time.Duration
	// OnStall is called, with the watch's name, when a watch is stopped
	// for lack of progress; may be nil.
	OnStall func(name string)

	now     func() time.Time
	mu      sync.Mutex
	watches map[*guardedWatch]struct{}
	once    sync.Once
}

func (g *WatchGuard) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

func (g *WatchGuard) deadline() time.Duration {
	if g.Deadline == 0 {
		return DefaultWatchProgressDeadline
	}
	return g.Deadline
}

func (g *WatchGuard) initialDeadline() time.Duration {
	if g.InitialDeadline <= 0 {
		return min(DefaultInitialEventsDeadline, g.deadline())
	}
	return g.InitialDeadline
}

// watchHooks are what one informer's owner learns from its list-watch.
type watchHooks struct {
	// admit decides whether an object of a namespace reaches the informer;
	// nil admits every object. Cluster-scoped objects are always admitted.
	admit func(namespace string) bool
	// progress is called for every event a watch delivers (cheap: once per
	// event).
	progress func()
	// listing is called with true when a full list starts (a List, or a
	// watch that sends its initial events) and with false when it ends.
	listing func(bool)
	// stalled is called when one of its watches is stopped for lack of
	// progress.
	stalled func()
}

// listerWatcher wraps lw (named name: a resource, for logs and metrics).
func (g *WatchGuard) listerWatcher(name string, lw toolscache.ListerWatcher, hooks watchHooks) toolscache.ListerWatcher {
	l := &guardedListWatch{g: g, name: name, lw: toolscache.ToListerWatcherWithContext(lw), orig: lw, hooks: hooks}
	l.last.Store(g.clock().UnixNano())
	return l
}

// newInformer returns a cache.Options.NewInformer that guards every
// informer it builds; name names an informer from its example object.
func (g *WatchGuard) NewInformer(name func(runtime.Object) string, hooks func(runtime.Object) watchHooks) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		var h watchHooks
		if hooks != nil {
			h = hooks(obj)
		}
		return toolscache.NewSharedIndexInformerWithOptions(g.listerWatcher(name(obj), lw, h), obj, toolscache.SharedIndexInformerOptions{
			ResyncPeriod: resync,
			Indexers:     indexers,
		})
	}
}

func (g *WatchGuard) add(w *guardedWatch) {
	g.once.Do(func() { go g.run() })
	g.mu.Lock()
	if g.watches == nil {
		g.watches = map[*guardedWatch]struct{}{}
	}
	g.watches[w] = struct{}{}
	g.mu.Unlock()
}

func (g *WatchGuard) remove(w *guardedWatch) {
	g.mu.Lock()
	delete(g.watches, w)
	g.mu.Unlock()
}

// run checks the deadline of every open watch, a few times per deadline.
func (g *WatchGuard) run() {
	d := g.deadline()
	if d < 0 {
		return
	}
	t := time.NewTicker(max(min(d, g.initialDeadline())/4, 50*time.Millisecond))
	defer t.Stop()
	for range t.C {
		g.check()
	}
}

// check stops every watch whose informer made no progress within its
// deadline.
func (g *WatchGuard) check() {
	if g.deadline() < 0 {
		return
	}
	var open []*guardedWatch
	g.mu.Lock()
	for w := range g.watches {
		open = append(open, w)
	}
	g.mu.Unlock()
	for _, w := range open {
		if w.l.overdue() {
			g.remove(w)
			w.l.stall()
			// Its reflector sees the result channel close (or, when the
			// API server had not even answered, the request fail) and
			// watches again from the last resource version it saw.
			w.abort()
		}
	}
}

// guardedListWatch is one informer's list-watch through the guard.
// Progress is the informer's, across its watches: a reflector that keeps
// opening watches that end without an event (an initial list that fails on
// every try, retried inside client-go) is as stalled as one silent watch.
type guardedListWatch struct {
	g     *WatchGuard
	name  string
	lw    toolscache.ListerWatcherWithContext
	orig  toolscache.ListerWatcher // lw as given
	hooks watchHooks
	// last is when one of its watches last delivered an event (or when
	// it was created, or last reported stalled), in unix nanoseconds.
	last atomic.Int64
	// initial: its latest watch streams an initial list not ended yet.
	initial atomic.Bool
}

// overdue reports whether the informer's progress is older than its
// deadline.
func (l *guardedListWatch) overdue() bool {
	limit := l.g.deadline()
	if limit < 0 {
		return false
	}
	if l.initial.Load() {
		limit = l.g.initialDeadline()
	}
	return l.g.clock().Sub(time.Unix(0, l.last.Load())) > limit
}

// stall reports the informer stalled, and gives it another deadline.
func (l *guardedListWatch) stall() {
	l.last.Store(l.g.clock().UnixNano())
	watchRestarts.WithLabelValues(l.name).Inc()
	if l.g.OnStall != nil {
		l.g.OnStall(l.name)
	}
	if l.hooks.stalled != nil {
		l.hooks.stalled()
	}
}

// IsWatchListSemanticsUnSupported is the wrapped list-watch's: one that
// must list, then watch, still does through the guard.
func (l *guardedListWatch) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(l.orig)
}

func (l *guardedListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *guardedListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists, dropping the objects of namespaces not admitted.
func (l *guardedListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if l.hooks.listing != nil {
		l.hooks.listing(true)
		defer l.hooks.listing(false)
	}
	out, err := l.lw.ListWithContext(ctx, opts)
	if err != nil || l.hooks.admit == nil {
		return out, err
	}
	switch list := out.(type) {
	case *unstructured.UnstructuredList:
		kept := list.Items[:0]
		for i := range list.Items {
			if l.admitted(list.Items[i].GetNamespace()) {
				kept = append(kept, list.Items[i])
			}
		}
		clear(list.Items[len(kept):])
		list.Items = kept
	case *metav1.PartialObjectMetadataList:
		kept := list.Items[:0]
		for i := range list.Items {
			if l.admitted(list.Items[i].Namespace) {
				kept = append(kept, list.Items[i])
			}
		}
		clear(list.Items[len(kept):])
		list.Items = kept
	}
	return out, nil
}

func (l *guardedListWatch) admitted(namespace string) bool {
	return namespace == "" || l.hooks.admit == nil || l.hooks.admit(namespace)
}

// WatchWithContext opens a long watch whose progress the guard follows.
func (l *guardedListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if opts.TimeoutSeconds != nil && l.g.Timeout >= 0 {
		least := l.g.Timeout
		if least == 0 {
			least = DefaultWatchTimeout
		}
		t := int64((least + rand.N(least)).Seconds())
		opts.TimeoutSeconds = &t
	}
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if initial && l.hooks.listing != nil {
		l.hooks.listing(true)
	}
	// The deadline runs from the request: an API server that never
	// answers it is a stalled watch too.
	ctx, cancel := context.WithCancel(ctx)
	w := &guardedWatch{name: l.name, out: make(chan watch.Event), done: make(chan struct{}), l: l, cancel: cancel}
	w.initial.Store(initial)
	l.initial.Store(initial)
	l.g.add(w)
	src, err := l.lw.WatchWithContext(ctx, opts)
	if err != nil {
		l.g.remove(w)
		cancel()
		if initial && l.hooks.listing != nil {
			l.hooks.listing(false)
		}
		return nil, err
	}
	w.mu.Lock()
	w.src = src
	aborted := w.aborted
	w.mu.Unlock()
	if aborted {
		src.Stop()
	}
	go w.run()
	return w, nil
}

// guardedWatch forwards a watch's events, recording progress and dropping
// objects of namespaces not admitted.
type guardedWatch struct {
	mu      sync.Mutex
	src     watch.Interface // nil until the API server answered
	aborted bool
	cancel  context.CancelFunc
	name    string
	out     chan watch.Event
	done    chan struct{}
	stop    sync.Once
	l       *guardedListWatch
	initial atomic.Bool // still sending its initial events (a streaming list)
}

func (w *guardedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *guardedWatch) Stop() {
	w.stop.Do(func() {
		close(w.done)
		w.mu.Lock()
		src := w.src
		w.mu.Unlock()
		if src != nil {
			src.Stop()
		}
		w.cancel()
	})
}

// abort ends a stalled watch: its source stops, or its request is
// cancelled when the API server has not answered yet.
func (w *guardedWatch) abort() {
	w.mu.Lock()
	src := w.src
	w.aborted = true
	w.mu.Unlock()
	if src != nil {
		src.Stop()
		return
	}
	w.cancel()
}

func (w *guardedWatch) run() {
	defer func() {
		w.cancel()
		w.l.g.remove(w)
		select {
		case <-w.done: // stopped by its reflector
		default:
			if w.l.overdue() {
				// Ended on its own, and the informer has made no
				// progress for too long.
				w.l.stall()
			}
		}
		if w.initial.Load() && w.l.hooks.listing != nil {
			w.l.hooks.listing(false)
		}
		close(w.out)
	}()
	in := w.src.ResultChan()
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-in:
		case <-w.done:
			return
		}
		if !ok {
			return
		}
		w.l.last.Store(w.l.g.clock().UnixNano())
		if w.l.hooks.progress != nil {
			w.l.hooks.progress()
		}
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if o, isObj := ev.Object.(client.Object); isObj && !w.l.admitted(o.GetNamespace()) {
				continue
			}
		case watch.Bookmark:
			if w.initial.Load() {
				if o, isObj := ev.Object.(client.Object); isObj && o.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					// The streaming list ends with this bookmark; the
					// reflector replaces its store when it reads it.
					w.initial.Store(false)
					w.l.initial.Store(false)
					if w.l.hooks.listing != nil {
						w.l.hooks.listing(false)
					}
				}
			}
		}
		select {
		case w.out <- ev:
		case <-w.done:
			return
		}
	}
}
