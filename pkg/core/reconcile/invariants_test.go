package reconcile

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// aibomBlindReader is an AIBOM cache that has not seen any AIBOM yet.
type aibomBlindReader struct{ client.Reader }

func (r aibomBlindReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1alpha1.AIBOM); ok {
		return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("aiboms").GroupResource(), key.Name)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// transformingReader reads AIBOMs as the manager's cache holds them
// (TransformAIBOM: no document, a forged hash marked).
type transformingReader struct{ client.Reader }

func (r transformingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if a, ok := obj.(*v1alpha1.AIBOM); ok {
		_, _ = TransformAIBOM(a)
	}
	return nil
}

func widgetObj(name, uid string, owner client.Object) *unstructured.Unstructured {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(coretest.WidgetGVK)
	w.SetNamespace(coretest.Ns)
	w.SetName(name)
	w.SetUID(types.UID(uid))
	if owner != nil {
		coretest.SetController(w, owner)
	}
	return w
}

// #29 item 1: a workload reported as a root whose AIBOM the cache does not
// show (another leader created it; our create met AlreadyExists), then
// rolled up: its AIBOM is deleted by that reconcile, from the API server's
// truth, not left until the AIBOM's create event arrives.
func TestRolledUpDeletesAnAIBOMTheCacheDoesNotShow(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	prev := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: f.key.Name, Labels: map[string]string{ManagedByLabel: ManagedBy}},
		Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: coretest.WidgetGVK.GroupVersion().String(), Kind: "Widget", Name: "graph", UID: "uid-graph"}}}
	require.NoError(t, f.client.Create(ctx, prev))
	f.r.Reader = aibomBlindReader{f.client}
	f.r.APIReader = f.client

	res, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Positive(t, res.RequeueAfter, "the create met the AIBOM the cache lacks: retried")

	top := widgetObj("top", "uid-top", nil)
	f.r.Store = graph.NewMemoryStore([]client.Object{top, widgetObj("graph", "uid-graph", top)})
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})), "the rolled-up workload's AIBOM is deleted at once")

	// A rolled-up workload never reported here costs no live read.
	f.r.APIReader = nil
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
}

// #29 item 3: the workload's kind leaves the registry (its profile is
// deleted) while its reconcile runs, after the loader's one-time delete
// pass found nothing: the AIBOM the reconcile writes is removed at once.
func TestKindRemovedDuringAReconcileLeavesNoAIBOM(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	q := newTestQueue(t)
	f.r.Queue = q
	started, release := make(chan struct{}), make(chan struct{})
	f.adapter.set(func() (adapter.Findings, error) {
		close(started)
		<-release
		return adapter.Findings{}, nil
	})
	done := make(chan error)
	go func() {
		_, err := f.r.Reconcile(ctx, f.req)
		done <- err
	}()
	<-started
	_, _, removed, err := f.r.Registry.SetAdapters()
	require.NoError(t, err)
	require.NotEmpty(t, removed)
	var list v1alpha1.AIBOMList
	require.NoError(t, f.client.List(ctx, &list))
	require.Empty(t, list.Items, "the loader's pass runs before the write: nothing to delete yet")
	close(release)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("reconcile did not return")
	}
	// The write is decided again at once, now as a generic root's: the
	// workload absorbs nothing and embeds no AI workload, so its AIBOM goes.
	require.Equal(t, 1, q.Len(), "the racing write is decided again")
	again, _ := q.Get()
	q.Done(again)
	require.Equal(t, f.req, again)
	_, err = f.r.Reconcile(ctx, again)
	require.NoError(t, err)
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})), "no orphan AIBOM of a kind no adapter tracks")
}

// #29 item 7: status fields a reader relies on beyond the document (the
// summary kubectl shows, the absorbed count) are repaired when forged.
func TestForgedSummaryAndCountsAreRepaired(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	f.adapter.set(func() (adapter.Findings, error) {
		return adapter.Findings{Runtimes: []adapter.Runtime{{Name: "vllm", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: "spec.image"}}}}, nil
	})
	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	good := f.aibom(t).Status
	require.Equal(t, "vllm", good.Summary.Runtime)

	a := f.aibom(t)
	a.Status.Summary.Runtime, a.Status.Summary.Confidence, a.Status.AbsorbedCount = "forged", "declared", 7
	a.Status.Absorbed = []string{"Deployment.apps/ghost"}
	require.NoError(t, f.client.Status().Update(ctx, a))

	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	got := f.aibom(t).Status
	require.Equal(t, good.Summary, got.Summary)
	require.Equal(t, good.AbsorbedCount, got.AbsorbedCount)
	require.Equal(t, good.Absorbed, got.Absorbed)
	require.Equal(t, good.Document, got.Document)
}

// #29 item 7: an emptied status.document with a status.documentRef to any
// URL and the real hash is not a document held by a sink: this process
// never wrote that reference, so the document is rewritten inline.
func TestForgedDocumentRefIsNotTrusted(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	f.r.Reader = transformingReader{f.client}
	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	good := f.aibom(t).Status
	require.NotEmpty(t, good.Document)

	a := f.aibom(t)
	a.Status.Document = ""
	a.Status.DocumentRef = &v1alpha1.DocumentReference{Sink: "webhook", Location: "https://evil.example/bom.json", SHA256: good.DocumentSHA256, Size: good.DocumentSize}
	require.NoError(t, f.client.Status().Update(ctx, a))

	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	got := f.aibom(t).Status
	require.Nil(t, got.DocumentRef, "a reference the controller did not write is removed")
	require.Equal(t, good.Document, got.Document, "the document is inline again")
	require.Equal(t, good.DocumentSHA256, got.DocumentSHA256)
}

// The API server drops empty lists: a status read back equals the one
// written.
func TestStatusSumIgnoresEmptyVersusAbsentLists(t *testing.T) {
	require.Equal(t, statusSum(v1alpha1.AIBOMStatus{Absorbed: []string{}, Summary: v1alpha1.Summary{Models: []string{}}}), statusSum(v1alpha1.AIBOMStatus{}))
}

type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// A root that stays a root costs no live read, even with a long name (its
// reconcile checks the legacy AIBOM name, which the cache rightly lacks).
func TestSteadyRootsCostNoLiveRead(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	long := strings.Repeat("a", 250)
	f.r.Store = graph.NewMemoryStore([]client.Object{widgetObj(long, "uid-long", nil)})
	live := &countingReader{Reader: f.client}
	f.r.APIReader = live
	req := Request{GroupKind: coretest.WidgetGVK.GroupKind(), Namespace: coretest.Ns, Name: long}
	for range 3 {
		_, err := f.r.Reconcile(ctx, req)
		require.NoError(t, err)
	}
	require.Zero(t, live.gets)
}

// A generic root's reconcile (its kind never tracked) is not decided again
// after it wrote: only a write racing with its kind leaving the registry is.
// Without the distinction every generic root would requeue itself forever.
func TestAGenericRootsReconcileDoesNotRequeueItself(t *testing.T) {
	f := newReconcilerFixture(t, 0)
	q := newTestQueue(t)
	f.r.Queue = q
	podReq := Request{GroupKind: schema.GroupKind{Kind: "Pod"}, Namespace: coretest.Ns, Name: "notebook", UID: "u"}
	require.NoError(t, f.r.afterReconcile(context.Background(), podReq, false, OutcomeUnchanged, nil))
	require.Zero(t, q.Len(), "a generic root is not requeued")
	require.NoError(t, f.r.afterReconcile(context.Background(), f.req, true, OutcomeCreated, nil))
	require.Zero(t, q.Len(), "a kind still tracked is not requeued")
}
