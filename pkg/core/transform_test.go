package core

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// A pod as the API server returns it after kubectl apply: spec, labels,
// annotations, managed fields and a full status.
const fullPodYAML = `
apiVersion: v1
kind: Pod
metadata:
  name: llama-7d9f8c6b5-x2x9z
  namespace: ns
  uid: 0b8f1c9e-2d3a-4e5f-8a7b-1c2d3e4f5a6b
  resourceVersion: "4711"
  generation: 1
  creationTimestamp: "2026-11-29T10:00:00Z"
  generateName: llama-7d9f8c6b5-
  labels: {app: llama, pod-template-hash: 7d9f8c6b5}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Pod"}'
    model.aibom.dev/name: meta-llama/Llama-3.1-8B-Instruct
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: llama-7d9f8c6b5, uid: 5c1f0e2a-0000-4000-8000-000000000001, controller: true, blockOwnerDeletion: true}
  finalizers: [example.com/keep]
  managedFields:
  - {manager: kube-controller-manager, operation: Update, apiVersion: v1, time: "2026-11-29T10:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {}}}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.3
    args: [--model, meta-llama/Llama-3.1-8B-Instruct]
    env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}]
  volumes: [{name: cache, emptyDir: {}}]
status:
  phase: Running
  podIP: 10.0.0.7
  conditions: [{type: Ready, status: "True"}]
  initContainerStatuses:
  - {name: fetch, image: busybox:1.36, imageID: docker.io/library/busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111, ready: true, restartCount: 0, state: {terminated: {exitCode: 0}}}
  containerStatuses:
  - {name: vllm, image: vllm/vllm-openai:v0.6.3, imageID: docker.io/vllm/vllm-openai@sha256:2222222222222222222222222222222222222222222222222222222222222222, ready: true, restartCount: 2, started: true, state: {running: {startedAt: "2026-11-29T10:01:00Z"}}}
`

const keptPodYAML = `
apiVersion: v1
kind: Pod
metadata:
  name: llama-7d9f8c6b5-x2x9z
  namespace: ns
  uid: 0b8f1c9e-2d3a-4e5f-8a7b-1c2d3e4f5a6b
  resourceVersion: "4711"
  generation: 1
  creationTimestamp: "2026-11-29T10:00:00Z"
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: llama-7d9f8c6b5, uid: 5c1f0e2a-0000-4000-8000-000000000001, controller: true, blockOwnerDeletion: true}
status:
  initContainerStatuses:
  - {name: fetch, image: busybox:1.36, imageID: docker.io/library/busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111}
  containerStatuses:
  - {name: vllm, image: vllm/vllm-openai:v0.6.3, imageID: docker.io/vllm/vllm-openai@sha256:2222222222222222222222222222222222222222222222222222222222222222}
`

func decodeYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

func TestTransformPodKeepsWhatTheCoreReads(t *testing.T) {
	pod := decodeYAML(t, fullPodYAML)
	// What the core reads before the transform...
	wantDigests := podsOf([]*unstructured.Unstructured{pod})
	wantImages := runningImages(pod)
	wantRefs := pod.GetOwnerReferences()

	out, err := TransformPod(pod)
	require.NoError(t, err)
	got := out.(*unstructured.Unstructured)
	require.Equal(t, decodeYAML(t, keptPodYAML).Object, got.Object)

	// ...is what it reads after.
	require.Equal(t, wantDigests, podsOf([]*unstructured.Unstructured{got}))
	require.Equal(t, wantImages, runningImages(got))
	require.Equal(t, wantRefs, got.GetOwnerReferences())
	require.Equal(t, graph.ControllerUID(pod), graph.ControllerUID(got))

	// Idempotent.
	again, err := TransformPod(got.DeepCopy())
	require.NoError(t, err)
	require.Equal(t, got.Object, again.(*unstructured.Unstructured).Object)
}

func TestTransformPodWithoutStatus(t *testing.T) {
	pod := decodeYAML(t, fullPodYAML)
	delete(pod.Object, "status")
	out, err := TransformPod(pod)
	require.NoError(t, err)
	u := out.(*unstructured.Unstructured)
	require.NotContains(t, u.Object, "status")
	require.NotContains(t, u.Object, "spec")
	require.Equal(t, "llama-7d9f8c6b5-x2x9z", u.GetName())
}

const trackedYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
  namespace: ns
  uid: 6f1c2b9e-3d4a-4e5f-8a7b-1c2d3e4f5a6b
  resourceVersion: "12"
  generation: 3
  labels: {app: llama}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"apps/v1","kind":"Deployment"}'
    model.aibom.dev/name: meta-llama/Llama-3.1-8B-Instruct
  managedFields:
  - {manager: kubectl, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {}}}
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: llama}
      annotations: {kubectl.kubernetes.io/last-applied-configuration: stays-in-the-template}
    spec:
      containers: [{name: vllm, image: vllm/vllm-openai:v0.6.3, args: [--model, meta-llama/Llama-3.1-8B-Instruct]}]
status:
  replicas: 2
  readyReplicas: 2
  conditions: [{type: Available, status: "True"}]
`

func TestTransformTrackedDropsStatusManagedFieldsAndLastApplied(t *testing.T) {
	obj := decodeYAML(t, trackedYAML)
	want := decodeYAML(t, trackedYAML)
	delete(want.Object, "status")
	md := want.Object["metadata"].(map[string]any)
	delete(md, "managedFields")
	delete(md["annotations"].(map[string]any), LastAppliedAnnotation)

	out, err := TransformTracked(obj)
	require.NoError(t, err)
	require.Equal(t, want.Object, out.(*unstructured.Unstructured).Object)
	require.Equal(t, map[string]string{"model.aibom.dev/name": "meta-llama/Llama-3.1-8B-Instruct"}, obj.GetAnnotations())

	again, err := TransformTracked(obj.DeepCopy())
	require.NoError(t, err)
	require.Equal(t, want.Object, again.(*unstructured.Unstructured).Object)

	// An object whose only annotation was last-applied has none left.
	only := decodeYAML(t, trackedYAML)
	only.SetAnnotations(map[string]string{LastAppliedAnnotation: "{}"})
	_, _ = TransformTracked(only)
	require.NotContains(t, only.Object["metadata"], "annotations")
}

func TestTransformMetadataOnPartialObjectMetadata(t *testing.T) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "rs", Namespace: "ns", UID: "u1", ResourceVersion: "3",
		Labels:          map[string]string{"app": "x"},
		Annotations:     map[string]string{LastAppliedAnnotation: "{}", "deployment.kubernetes.io/revision": "2"},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "u0"}},
	}}
	m.SetGroupVersionKind(coretest.RsGVK)
	out, err := TransformMetadata(m)
	require.NoError(t, err)
	got := out.(*metav1.PartialObjectMetadata)
	require.Nil(t, got.ManagedFields)
	require.Equal(t, map[string]string{"deployment.kubernetes.io/revision": "2"}, got.Annotations)
	require.Equal(t, map[string]string{"app": "x"}, got.Labels)
	require.Len(t, got.OwnerReferences, 1)
	require.Equal(t, coretest.RsGVK, got.GroupVersionKind())

	m.Annotations = map[string]string{LastAppliedAnnotation: "{}"}
	_, _ = TransformMetadata(m)
	require.Nil(t, m.Annotations)

	// A typed object (the manager cache's AIBOMs): managed fields only.
	typed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{LastAppliedAnnotation: "{}"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err = TransformMetadata(typed)
	require.NoError(t, err)
	require.Nil(t, out.(*corev1.Pod).ManagedFields)
	require.Equal(t, map[string]string{LastAppliedAnnotation: "{}"}, out.(*corev1.Pod).Annotations)
}

func TestTransformForChoosesByKind(t *testing.T) {
	reg := coretest.TestRegistry(t)
	for gk, want := range map[schema.GroupKind]string{coretest.PodGVK.
		GroupKind(): "pod", coretest.DeployGVK.
		GroupKind(): "tracked", coretest.WidgetGVK.
		GroupKind(): "tracked", coretest.RsGVK.
		GroupKind(): "metadata", coretest.GearGVK.
		GroupKind(): "metadata",
	} {
		e, ok := reg.Lookup(gk)
		require.True(t, ok)
		obj := decodeYAML(t, fullPodYAML)
		out, err := TransformFor(e)(obj)
		require.NoError(t, err)
		u := out.(*unstructured.Unstructured)
		switch want {
		case "pod":
			require.NotContains(t, u.Object, "spec", gk.String())
		case "tracked":
			require.Contains(t, u.Object, "spec", gk.String())
			require.NotContains(t, u.Object, "status", gk.String())
		case "metadata":
			require.Contains(t, u.Object, "spec", gk.String())
			require.Contains(t, u.Object, "status", gk.String())
			require.Empty(t, u.GetManagedFields(), gk.String())
		}
	}
}

// Malformed objects (of JSON-decodable values) and foreign types never panic, and never fail the
// informer: the transform returns something for every input.
func TestTransformsNeverPanic(t *testing.T) {
	inputs := map[string]func() any{
		"nil":                  func() any { return nil },
		"nil unstructured":     func() any { return (*unstructured.Unstructured)(nil) },
		"nil partial metadata": func() any { return (*metav1.PartialObjectMetadata)(nil) },
		"nil typed pod":        func() any { return (*corev1.Pod)(nil) },
		"nil AIBOM":            func() any { return (*v1alpha1.AIBOM)(nil) },
		"empty AIBOM":          func() any { return &v1alpha1.AIBOM{} },
		"empty unstructured":   func() any { return &unstructured.Unstructured{} },
		"string":               func() any { return "not an object" },
		"tombstone":            func() any { return toolscache.DeletedFinalStateUnknown{Key: "ns/x", Obj: decodeYAML(t, fullPodYAML)} },
		"typed pod": func() any {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{}}}}
		},
		"metadata is a string": func() any {
			return &unstructured.Unstructured{Object: map[string]any{"metadata": "x", "status": "y", "spec": int64(1)}}
		},
		"metadata is a list": func() any { return &unstructured.Unstructured{Object: map[string]any{"metadata": []any{int64(1)}}} },
		"annotations not a map": func() any {
			return raw(map[string]any{"metadata": map[string]any{"annotations": []any{"a"}, "managedFields": "x"}})
		},
		"annotations nil values": func() any {
			return raw(map[string]any{"metadata": map[string]any{"annotations": map[string]any{LastAppliedAnnotation: nil}}})
		},
		"status is a string": func() any { return raw(map[string]any{"status": "Running"}) },
		"statuses not a list": func() any {
			return raw(map[string]any{"status": map[string]any{"containerStatuses": map[string]any{"name": "x"}}})
		},
		"status items not maps": func() any {
			return raw(map[string]any{"status": map[string]any{"containerStatuses": []any{"x", int64(1), nil, []any{}}}})
		},
		"status fields wrong": func() any {
			return raw(map[string]any{"status": map[string]any{"containerStatuses": []any{map[string]any{"name": int64(1), "image": []any{}, "imageID": nil}}}})
		},
		"ownerReferences wrong": func() any { return raw(map[string]any{"metadata": map[string]any{"ownerReferences": "x"}}) },
		"ownerReferences items": func() any {
			return raw(map[string]any{"metadata": map[string]any{"ownerReferences": []any{"x", map[string]any{"controller": "yes"}}}})
		},
	}
	sup := &Supervisor{}
	reg := coretest.TestRegistry(t)
	for name, input := range inputs {
		for tname, tf := range map[string]toolscache.TransformFunc{
			"pod": TransformPod, "tracked": TransformTracked, "metadata": TransformMetadata, "aibom": TransformAIBOM,
			"supervisor pod":      sup.transform(entryOf(t, reg, coretest.PodGVK)),
			"supervisor tracked":  sup.transform(entryOf(t, reg, coretest.DeployGVK)),
			"supervisor walkonly": sup.transform(entryOf(t, reg, coretest.RsGVK)),
		} {
			require.NotPanics(t, func() {
				out, err := tf(input())
				require.NoError(t, err, "%s on %s", tname, name)
				// The result is still something the core can read.
				if o, ok := out.(client.Object); ok && out != nil && !isNilPointer(out) {
					_ = graph.ControllerUID(o)
					if u, ok := o.(*unstructured.Unstructured); ok {
						_ = runningImages(u)
						_ = podsOf([]*unstructured.Unstructured{u})
					}
				}
			}, "%s on %s", tname, name)
		}
	}
}

func raw(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}

func isNilPointer(v any) bool {
	switch o := v.(type) {
	case *unstructured.Unstructured:
		return o == nil
	case *metav1.PartialObjectMetadata:
		return o == nil
	case *corev1.Pod:
		return o == nil
	case *v1alpha1.AIBOM:
		return o == nil
	}
	return false
}

func entryOf(t *testing.T, reg *graph.Registry, gvk schema.GroupVersionKind) graph.Entry {
	t.Helper()
	e, ok := reg.Lookup(gvk.GroupKind())
	require.True(t, ok, gvk.String())
	return e
}

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
		p := decodeYAML(t, fullPodYAML)
		p.SetNamespace(coretest.Ns)
		coretest.SetController(p, rs)
		statuses, _, _ := unstructured.NestedSlice(p.Object, "status", "containerStatuses")
		statuses[0].(map[string]any)["imageID"] = imageID
		require.NoError(t, unstructured.SetNestedSlice(p.Object, statuses, "status", "containerStatuses"))
		if extra != nil {
			extra(p)
		}
		out, err := TransformFor(entryOf(t, reg, coretest.PodGVK))(p)
		require.NoError(t, err)
		return out.(client.Object)
	}
	oldPod := pod("docker.io/vllm/vllm-openai@sha256:2222222222222222222222222222222222222222222222222222222222222222", nil)
	store := graph.NewMemoryStore(append(objs, oldPod))
	m := EventMapper{Registry: reg, Store: store}
	podEntry := entryOf(t, reg, coretest.PodGVK)
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
