package reconcile

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// fullLister serves the full AIBOM lists of the echo list-watch: the
// stored versions by resourceVersion, the latest under "".
type fullLister struct {
	mu       sync.Mutex
	versions map[string]*v1alpha1.AIBOM
	err      error
	calls    []metav1.ListOptions
}

func (f *fullLister) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, opts)
	if f.err != nil {
		err := f.err
		f.err = nil
		return nil, err
	}
	list := &v1alpha1.AIBOMList{}
	if a, ok := f.versions[opts.ResourceVersion]; ok {
		list.Items = append(list.Items, *a.DeepCopy())
	}
	return list, nil
}

// store makes a stored at resourceVersion rv ("" for the latest), under
// the lock the echo's reads take.
func (f *fullLister) store(rv string, a *v1alpha1.AIBOM) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.versions[rv] = a
}

// failNext makes the next list fail with err.
func (f *fullLister) failNext(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fullLister) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	panic("the echo list-watch watches through the metadata client")
}

func (f *fullLister) reads() []metav1.ListOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]metav1.ListOptions(nil), f.calls...)
}

// metaWatch is the metadata client's AIBOM resource, of which only Watch is
// used.
type metaWatch struct {
	metadata.ResourceInterface
	w *watch.FakeWatcher
}

func (m metaWatch) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return m.w, nil
}

func metaAt(uid, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: types.UID(uid), ResourceVersion: rv}}
}

func aibomAt(uid, rv, inputHash string) *v1alpha1.AIBOM {
	return &v1alpha1.AIBOM{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: types.UID(uid), ResourceVersion: rv},
		Spec:       v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{Kind: "Deployment", Name: "d"}},
		Status:     v1alpha1.AIBOMStatus{InputHash: inputHash},
	}
}

type echoFixture struct {
	lister *fullLister
	src    *watch.FakeWatcher
	lw     *EchoListWatch
	out    watch.Interface
}

func newEchoFixture(t *testing.T) *echoFixture {
	t.Helper()
	f := &echoFixture{lister: &fullLister{versions: map[string]*v1alpha1.AIBOM{}}, src: watch.NewFakeWithChanSize(8, false)}
	f.lw = NewEchoListWatch(f.lister, metaWatch{w: f.src})
	f.lw.memo = newEchoMemo()
	f.lw.wait = 2 * time.Second
	out, err := f.lw.WatchWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	f.out = out
	t.Cleanup(out.Stop)
	return f
}

func (f *echoFixture) next(t *testing.T) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-f.out.ResultChan():
		require.True(t, ok, "the watch ended")
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event delivered")
		return watch.Event{}
	}
}

var echoKeyA = client.ObjectKey{Namespace: "ns", Name: "a"}

func TestEchoDeliversTheControllersOwnWritesWithoutReading(t *testing.T) {
	f := newEchoFixture(t)
	created := aibomAt("u1", "1", "")
	f.lw.memo.expect(echoKeyA)
	f.lw.memo.answer(echoKeyA, "", created)
	f.src.Add(metaAt("u1", "1"))
	ev := f.next(t)
	assert.Equal(t, watch.Added, ev.Type)
	assert.Same(t, created, ev.Object)

	patched := aibomAt("u1", "2", "h1")
	f.lw.memo.expect(echoKeyA)
	f.lw.memo.answer(echoKeyA, "1", patched)
	f.src.Modify(metaAt("u1", "2"))
	ev = f.next(t)
	assert.Same(t, patched, ev.Object)
	assert.Empty(t, f.lister.reads(), "an echo of the controller's own write is not read")
}

func TestEchoReadsSomeoneElsesWriteAtItsVersion(t *testing.T) {
	f := newEchoFixture(t)
	f.lw.memo.answer(echoKeyA, "", aibomAt("u1", "1", ""))
	f.src.Add(metaAt("u1", "1"))
	f.next(t)
	forged := aibomAt("u1", "2", "forged")
	f.lister.store("2", forged)
	f.src.Modify(metaAt("u1", "2"))
	ev := f.next(t)
	got := ev.Object.(*v1alpha1.AIBOM)
	assert.Equal(t, "forged", got.Status.InputHash)
	assert.Equal(t, "2", got.ResourceVersion)
	reads := f.lister.reads()
	require.Len(t, reads, 1)
	assert.Equal(t, "2", reads[0].ResourceVersion)
	assert.Equal(t, metav1.ResourceVersionMatchExact, reads[0].ResourceVersionMatch)
	assert.Equal(t, "metadata.namespace=ns,metadata.name=a", reads[0].FieldSelector)
}

func TestEchoOfAWriteBasedOnAnUnseenVersionIsRead(t *testing.T) {
	f := newEchoFixture(t)
	f.lw.memo.answer(echoKeyA, "", aibomAt("u1", "1", ""))
	f.src.Add(metaAt("u1", "1"))
	f.next(t)
	// Someone wrote version 2; the controller's patch (version 3) was
	// based on version 1, so what version 3 holds merges both.
	f.lister.store("2", aibomAt("u1", "2", "theirs"))
	f.src.Modify(metaAt("u1", "2"))
	f.next(t)
	f.lw.memo.answer(echoKeyA, "1", aibomAt("u1", "3", "ours"))
	stored := aibomAt("u1", "3", "ours")
	stored.Status.Absorbed = []string{"theirs"}
	f.lister.store("3", stored)
	f.src.Modify(metaAt("u1", "3"))
	ev := f.next(t)
	assert.Equal(t, stored.Status, ev.Object.(*v1alpha1.AIBOM).Status, "the stored object, not the controller's idea of it")
	assert.Len(t, f.lister.reads(), 2)
}

func TestEchoWaitsForTheAnswerOfAWriteInFlight(t *testing.T) {
	f := newEchoFixture(t)
	created := aibomAt("u1", "1", "")
	f.lw.memo.expect(echoKeyA)
	f.src.Add(metaAt("u1", "1")) // the echo comes before the answer
	go func() {
		time.Sleep(100 * time.Millisecond)
		f.lw.memo.answer(echoKeyA, "", created)
	}()
	ev := f.next(t)
	assert.Same(t, created, ev.Object)
	assert.Empty(t, f.lister.reads())
}

func TestEchoOfAFailedWriteIsRead(t *testing.T) {
	f := newEchoFixture(t)
	f.lister.store("1", aibomAt("u1", "1", ""))
	f.lw.memo.expect(echoKeyA)
	f.src.Add(metaAt("u1", "1"))
	go func() {
		time.Sleep(50 * time.Millisecond)
		f.lw.memo.answer(echoKeyA, "", nil)
	}()
	ev := f.next(t)
	assert.Equal(t, "1", ev.Object.(*v1alpha1.AIBOM).ResourceVersion)
	assert.Len(t, f.lister.reads(), 1)
}

func TestEchoDeleteCarriesTheCachedSpec(t *testing.T) {
	f := newEchoFixture(t)
	store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	require.NoError(t, store.Add(aibomAt("u1", "1", "h")))
	f.lw.SetStore(store)
	f.src.Delete(metaAt("u1", "5"))
	ev := f.next(t)
	assert.Equal(t, watch.Deleted, ev.Type)
	got := ev.Object.(*v1alpha1.AIBOM)
	assert.Equal(t, "d", got.Spec.Subject.Name)
	assert.Equal(t, "5", got.ResourceVersion)

	// Another AIBOM under the name: its spec is not this one's.
	f.src.Delete(metaAt("u2", "6"))
	assert.Empty(t, f.next(t).Object.(*v1alpha1.AIBOM).Spec.Subject.Name)
}

func TestEchoOfAVersionNoLongerStoredIsTheLatestUnderItsVersion(t *testing.T) {
	f := newEchoFixture(t)
	f.lister.failNext(apierrors.NewResourceExpired("too old resource version"))
	f.lister.store("", aibomAt("u1", "9", "latest"))
	f.src.Add(metaAt("u1", "4"))
	got := f.next(t).Object.(*v1alpha1.AIBOM)
	assert.Equal(t, "latest", got.Status.InputHash)
	assert.Equal(t, "4", got.ResourceVersion)
}

func TestEchoSkipsAnAIBOMGoneBeforeItIsRead(t *testing.T) {
	f := newEchoFixture(t)
	f.src.Add(metaAt("u1", "1")) // not stored at any version: gone
	f.lister.store("2", &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "u2", ResourceVersion: "2"}})
	f.src.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "u2", ResourceVersion: "2"}})
	assert.Equal(t, "b", f.next(t).Object.(*v1alpha1.AIBOM).Name)
}

func TestEchoReadFailureEndsTheWatchWithAnError(t *testing.T) {
	f := newEchoFixture(t)
	f.lister.failNext(apierrors.NewServiceUnavailable("down"))
	f.src.Add(metaAt("u1", "1"))
	ev := f.next(t)
	assert.Equal(t, watch.Error, ev.Type)
	select {
	case _, ok := <-f.out.ResultChan():
		assert.False(t, ok, "the watch ends after the error")
	case <-time.After(5 * time.Second):
		t.Fatal("the watch did not end")
	}
}

func TestEchoBookmarkKeepsItsVersion(t *testing.T) {
	f := newEchoFixture(t)
	f.src.Action(watch.Bookmark, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "77"}})
	ev := f.next(t)
	assert.Equal(t, watch.Bookmark, ev.Type)
	assert.Equal(t, "77", ev.Object.(*v1alpha1.AIBOM).ResourceVersion)
	assert.Empty(t, f.lister.reads())
}

func TestEchoListResetsTheVersionsSeen(t *testing.T) {
	f := newEchoFixture(t)
	f.lister.store("", aibomAt("u1", "3", ""))
	_, err := f.lw.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	// A write based on the listed version is the controller's.
	own := aibomAt("u1", "4", "ours")
	f.lw.memo.answer(echoKeyA, "3", own)
	f.src.Modify(metaAt("u1", "4"))
	assert.Same(t, own, f.next(t).Object)
	assert.Len(t, f.lister.reads(), 1, "the list only")
}

func (f *fullLister) List(opts metav1.ListOptions) (runtime.Object, error) {
	return f.ListWithContext(context.Background(), opts)
}

func (f *fullLister) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return f.WatchWithContext(context.Background(), opts)
}
