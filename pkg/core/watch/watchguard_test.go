package watch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// fakeClock is a settable clock for the guard.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func pmeta(ns, name string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.Namespace, m.Name, m.ResourceVersion = ns, name, "1"
	return m
}

// guarded returns a guarded list-watch over a fake watch and list, and the
// options the last watch was opened with.
func guarded(g *WatchGuard, src *watch.FakeWatcher, list runtime.Object, hooks watchHooks) (toolscache.ListerWatcherWithContext, *metav1.ListOptions) {
	var last metav1.ListOptions
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return list, nil },
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			last = o
			return src, nil
		},
	}
	return g.listerWatcher("widgets", lw, hooks).(toolscache.ListerWatcherWithContext), &last
}

func TestWatchGuardRestartsOnlyASilentWatch(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var stalled []string
	g := &WatchGuard{Deadline: time.Minute, now: clock.now, OnStall: func(n string) { stalled = append(stalled, n) }}
	src := watch.NewFakeWithChanSize(10, false)
	lw, _ := guarded(g, src, nil, watchHooks{})
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)

	// Bookmarks every 40s keep a quiet watch alive.
	for range 5 {
		clock.add(40 * time.Second)
		src.Action(watch.Bookmark, pmeta("", ""))
		ev := <-w.ResultChan()
		require.Equal(t, watch.Bookmark, ev.Type, "bookmarks reach the reflector")
		g.check()
		require.False(t, src.IsStopped(), "a watch with a bookmark within the deadline is kept")
	}
	// Then nothing for longer than the deadline: stopped, and its result
	// channel closes (the reflector watches again).
	clock.add(61 * time.Second)
	g.check()
	require.True(t, src.IsStopped())
	_, open := <-w.ResultChan()
	require.False(t, open)
	require.Equal(t, []string{"widgets"}, stalled)
}

func TestWatchGuardAsksForLongWatches(t *testing.T) {
	g := &WatchGuard{Deadline: -1}
	src := watch.NewFake()
	lw, last := guarded(g, src, nil, watchHooks{})
	five := int64(300)
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{TimeoutSeconds: &five})
	require.NoError(t, err)
	defer w.Stop()
	require.NotNil(t, last.TimeoutSeconds)
	require.GreaterOrEqual(t, *last.TimeoutSeconds, int64(DefaultWatchTimeout.Seconds()))
	require.Less(t, *last.TimeoutSeconds, int64(2*DefaultWatchTimeout.Seconds()))
}

func TestWatchGuardAdmitsOptedInNamespacesOnly(t *testing.T) {
	g := &WatchGuard{Deadline: -1}
	src := watch.NewFakeWithChanSize(10, false)
	list := &metav1.PartialObjectMetadataList{Items: []metav1.PartialObjectMetadata{*pmeta("in", "a"), *pmeta("out", "b"), *pmeta("in", "c")}}
	var listing []bool
	lw, _ := guarded(g, src, list, watchHooks{
		admit:   func(ns string) bool { return ns == "in" },
		listing: func(on bool) { listing = append(listing, on) },
	})
	got, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for _, i := range got.(*metav1.PartialObjectMetadataList).Items {
		names = append(names, i.Name)
	}
	require.Equal(t, []string{"a", "c"}, names)
	require.Equal(t, []bool{true, false}, listing, "a list is announced while it runs")

	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	src.Add(pmeta("out", "x"))
	src.Add(pmeta("in", "y"))
	src.Delete(pmeta("out", "z"))
	src.Action(watch.Bookmark, pmeta("", ""))
	cluster := &metav1.PartialObjectMetadata{}
	cluster.Name = "cluster-scoped"
	src.Modify(cluster)
	var seen []string
	for range 3 {
		ev := <-w.ResultChan()
		seen = append(seen, string(ev.Type)+" "+ev.Object.(*metav1.PartialObjectMetadata).Name)
	}
	require.Equal(t, []string{"ADDED y", "BOOKMARK ", "MODIFIED cluster-scoped"}, seen)
}

func TestWatchGuardGivesAnInitialListAShortDeadline(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	g := &WatchGuard{Deadline: time.Hour, InitialDeadline: 10 * time.Second, now: clock.now}
	src := watch.NewFakeWithChanSize(10, false)
	lw, _ := guarded(g, src, nil, watchHooks{})
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: ptrTo(true)})
	require.NoError(t, err)
	// Objects keep it alive; the bookmark that ends the list switches it
	// to the long deadline.
	for range 3 {
		clock.add(8 * time.Second)
		src.Add(pmeta("ns", "a"))
		<-w.ResultChan()
		g.check()
		require.False(t, src.IsStopped())
	}
	end := pmeta("", "")
	end.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	src.Action(watch.Bookmark, end)
	<-w.ResultChan()
	clock.add(30 * time.Minute)
	g.check()
	require.False(t, src.IsStopped(), "after its initial list, a watch has the long deadline")

	// A watch whose initial list sends nothing is stopped after the short
	// deadline.
	src2 := watch.NewFakeWithChanSize(10, false)
	lw2, _ := guarded(g, src2, nil, watchHooks{})
	_, err = lw2.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: ptrTo(true)})
	require.NoError(t, err)
	clock.add(11 * time.Second)
	g.check()
	require.True(t, src2.IsStopped())
}

func ptrTo[T any](v T) *T { return &v }

// A list-watch that must list, then watch (the AIBOM informer's) still does
// through the guard; any other streams its initial list as before.
func TestWatchGuardKeepsListThenWatch(t *testing.T) {
	g := &WatchGuard{}
	require.True(t, watchlist.DoesClientNotSupportWatchListSemantics(g.listerWatcher("aibom", listThenWatch{&toolscache.ListWatch{}}, watchHooks{})))
	require.False(t, watchlist.DoesClientNotSupportWatchListSemantics(g.listerWatcher("pods", &toolscache.ListWatch{}, watchHooks{})))
}
