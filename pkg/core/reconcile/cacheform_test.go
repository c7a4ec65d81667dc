package reconcile

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/compact"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
	"github.com/aibom-dev/aibom/pkg/core/watch"
)

// The event mapper's change detection works on transformed pods: a new
// running digest enqueues the root; a change the transform drops (spec,
// labels, conditions) does not reach the mapper at all.
func TestEventsOnTransformedPodsStillEnqueueTheRoot(t *testing.T) {
	reg := coretest.TestRegistry(t)
	w := &coretest.World{}
	d := w.Add(coretest.DeployGVK, "llama", nil)
	rs := w.Add(coretest.RsGVK, "llama-7d9f8c6b5", d)
	var objs []client.Object
	for _, o := range w.Objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		require.NoError(t, err)
		objs = append(objs, &unstructured.Unstructured{Object: u})
	}
	pod := func(imageID string, extra func(*unstructured.Unstructured)) client.Object {
		p := coretest.DecodeYAML(t, coretest.FullPodYAML)
		p.SetNamespace(coretest.Ns)
		coretest.SetController(p, rs)
		statuses, _, _ := unstructured.NestedSlice(p.Object, "status", "containerStatuses")
		statuses[0].(map[string]any)["imageID"] = imageID
		require.NoError(t, unstructured.SetNestedSlice(p.Object, statuses, "status", "containerStatuses"))
		if extra != nil {
			extra(p)
		}
		out, err := watch.TransformFor(coretest.EntryOf(t, reg, coretest.PodGVK))(p)
		require.NoError(t, err)
		return out.(client.Object)
	}
	oldPod := pod("docker.io/vllm/vllm-openai@sha256:2222222222222222222222222222222222222222222222222222222222222222", nil)
	store := graph.NewMemoryStore(append(objs, oldPod))
	m := EventMapper{Registry: reg, Store: store}
	podEntry := coretest.EntryOf(t, reg, coretest.PodGVK)
	ctx := context.Background()

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[Request]())
	defer q.ShutDown()
	newPod := pod("docker.io/vllm/vllm-openai@sha256:3333333333333333333333333333333333333333333333333333333333333333", nil)
	m.OnUpdate(ctx, podEntry, oldPod, newPod, q)
	require.Equal(t, []Request{{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "llama"}}, drainMapped(ctx, m, q))

	// Only dropped fields changed: the transformed objects are equal.
	irrelevant := pod("docker.io/vllm/vllm-openai@sha256:2222222222222222222222222222222222222222222222222222222222222222", func(p *unstructured.Unstructured) {
		p.SetLabels(map[string]string{"app": "other"})
		require.NoError(t, unstructured.SetNestedField(p.Object, "Pending", "status", "phase"))
		require.NoError(t, unstructured.SetNestedSlice(p.Object, []any{map[string]any{"name": "vllm", "image": "vllm/vllm-openai:v0.7.0"}}, "spec", "containers"))
	})
	require.Equal(t, oldPod, irrelevant)
	m.OnUpdate(ctx, podEntry, oldPod, irrelevant, q)
	require.Zero(t, q.Len())

	// The same in the compact form the watches cache pods in.
	compacted := func(o client.Object) client.Object {
		c, err := compact.New(o.(*unstructured.Unstructured))
		require.NoError(t, err)
		return c
	}
	m.OnUpdate(ctx, podEntry, compacted(oldPod), compacted(newPod), q)
	require.Equal(t, []Request{{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "llama"}}, drainMapped(ctx, m, q))
	m.OnUpdate(ctx, podEntry, compacted(oldPod), compacted(irrelevant), q)
	require.Zero(t, q.Len())
}

func TestTransformAIBOMDropsOnlyTheDocumentAndManagedFields(t *testing.T) {
	now := metav1.Now()
	a := &v1alpha1.AIBOM{
		ObjectMeta: metav1.ObjectMeta{Name: "deployment-llama", Namespace: "ns", UID: "u", ResourceVersion: "9",
			Labels: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "aibom-controller"}},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "llama", UID: "w"}}},
		Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "llama", UID: "w"}},
		Status: v1alpha1.AIBOMStatus{Document: `{"bomFormat":"CycloneDX"}`, DocumentSHA256: "abc", DocumentSize: 25, InputHash: "h",
			Absorbed: []string{"ReplicaSet/x"}, AbsorbedCount: 1, Summary: v1alpha1.Summary{Runtime: "vllm", Model: "m", Models: []string{"m"}},
			LastChanged: &now, Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "r"}}},
	}
	want := a.DeepCopy()
	want.Status.Document = ""
	want.ManagedFields = nil
	// "abc" is not the document's hash: the cached copy says what it is.
	want.Status.DocumentSHA256 = forgedPrefix + "2e01b8740d2b1c7ff47487ab94ff0f7f4d2853f3d985cd6d7e381c4aa5ef9afa"

	out, err := TransformAIBOM(a)
	require.NoError(t, err)
	require.Equal(t, want, out)
	// Transformed again (an informer may): the same observation.
	again, err := TransformAIBOM(out.(*v1alpha1.AIBOM).DeepCopy())
	require.NoError(t, err)
	require.Equal(t, want, again)
	again, err = TransformAIBOM(out)
	require.NoError(t, err)
	require.Equal(t, want, again)
}

// aibomCacheReader reads like the manager's cache with CacheOptions: every
// AIBOM comes back as TransformAIBOM leaves it.
type aibomCacheReader struct{ client.Reader }

func (r aibomCacheReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	_, err := TransformAIBOM(obj)
	return err
}

// The reconciler writes the same AIBOMs, with as many writes, whether its
// cache holds AIBOMs with or without their documents: a new document is
// always written (the patch's base has none), and a reconcile that keeps the
// last document (scrape or build failed) leaves it as it is on the server.
func TestReconcilerOnACacheWithoutDocumentsWritesTheSame(t *testing.T) {
	full := newReconcilerFixture(t, 4096)
	trimmed := newReconcilerFixture(t, 4096)
	trimmed.r.Reader = aibomCacheReader{trimmed.client}

	container := func(image string) adapter.Findings {
		return adapter.Findings{Containers: []adapter.Container{{Name: "c", Image: image,
			Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: "spec.containers[0].image"}}}}
	}
	overCap := adapter.Findings{}
	for i := 0; i < 200; i++ {
		overCap.Redactions = append(overCap.Redactions, adapter.Redaction{Locator: fmt.Sprintf("spec.env[%d](SECRET_%d)", i, i), Reason: "secret-name"})
	}
	steps := []struct {
		name     string
		findings adapter.Findings
		err      error
	}{
		{"new root", adapter.Findings{}, nil},
		{"unchanged", adapter.Findings{}, nil},
		{"image A", container("registry.example/a:1"), nil},
		{"scrape fails", adapter.Findings{}, errors.New("plugin restarting")},
		{"image A again", container("registry.example/a:1"), nil},
		{"image B", container("registry.example/b:1"), nil},
		{"over the cap", overCap, nil},
		{"image B again", container("registry.example/b:1"), nil},
		{"image C", container("registry.example/c:1"), nil},
		{"re-created, scrape fails", adapter.Findings{}, errors.New("plugin restarting")},
		{"re-created, image D", container("registry.example/d:1"), nil},
	}
	// Before this step the workload is re-created under its name with a new
	// UID: the AIBOM is re-pointed by an Update, whose response carries the
	// stored document, and a failed scrape must keep it.
	recreated := map[string]string{"re-created, scrape fails": "uid-graph-2"}
	for _, step := range steps {
		for _, f := range []*reconcilerFixture{full, trimmed} {
			if uid, ok := recreated[step.name]; ok {
				widget := &unstructured.Unstructured{}
				widget.SetGroupVersionKind(coretest.WidgetGVK)
				widget.SetNamespace(coretest.Ns)
				widget.SetName("graph")
				widget.SetUID(types.UID(uid))
				f.r.Store = graph.NewMemoryStore([]client.Object{widget})
			}
			f.adapter.set(func() (adapter.Findings, error) { return step.findings, step.err })
			_, err := f.r.Reconcile(context.Background(), f.req)
			require.NoError(t, err, step.name)
		}
		want, got := full.aibom(t), trimmed.aibom(t)
		for _, a := range []*v1alpha1.AIBOM{want, got} { // set from the clock by meta.SetStatusCondition
			for i := range a.Status.Conditions {
				a.Status.Conditions[i].LastTransitionTime = metav1.Time{}
			}
		}
		require.Equal(t, want.ResourceVersion, got.ResourceVersion, "%s: as many writes", step.name)
		require.Equal(t, want.Status, got.Status, "%s: the same status, document included", step.name)
		require.NotEmpty(t, got.Status.Document, step.name)
		require.Equal(t, len(got.Status.Document), got.Status.DocumentSize, step.name)
	}
}

// drainMapped resolves the mapping requests in q (as the workers do) until
// only workload reconciles are left, and returns those, in order.
func drainMapped(ctx context.Context, m EventMapper, q workqueue.TypedRateLimitingInterface[Request]) []Request {
	var out []Request
	for q.Len() > 0 {
		req, _ := q.Get()
		if !m.Process(ctx, req, q) {
			out = append(out, req)
		}
		q.Done(req)
	}
	return out
}

func TestTransformPodKeepsWhatTheCoreReads(t *testing.T) {
	pod := coretest.DecodeYAML(t, coretest.FullPodYAML)
	// What the core reads before the transform...
	wantDigests := podsOf([]*unstructured.Unstructured{pod})
	wantImages := runningImages(pod)
	wantRefs := pod.GetOwnerReferences()

	out, err := watch.TransformPod(pod)
	require.NoError(t, err)
	got := out.(*unstructured.Unstructured)
	require.Equal(t, coretest.DecodeYAML(t, coretest.KeptPodYAML).Object, got.Object)

	// ...is what it reads after.
	require.Equal(t, wantDigests, podsOf([]*unstructured.Unstructured{got}))
	require.Equal(t, wantImages, runningImages(got))
	require.Equal(t, wantRefs, got.GetOwnerReferences())
	require.Equal(t, graph.ControllerUID(pod), graph.ControllerUID(got))

	// Idempotent.
	again, err := watch.TransformPod(got.DeepCopy())
	require.NoError(t, err)
	require.Equal(t, got.Object, again.(*unstructured.Unstructured).Object)
}
