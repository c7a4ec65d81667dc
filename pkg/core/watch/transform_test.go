package watch

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

func TestTransformPodWithoutStatus(t *testing.T) {
	pod := coretest.DecodeYAML(t, coretest.FullPodYAML)
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
	obj := coretest.DecodeYAML(t, trackedYAML)
	want := coretest.DecodeYAML(t, trackedYAML)
	delete(want.Object, "status")
	md := want.Object["metadata"].(map[string]any)
	delete(md, "managedFields")
	delete(md["annotations"].(map[string]any), graph.LastAppliedAnnotation)

	out, err := TransformTracked(obj)
	require.NoError(t, err)
	require.Equal(t, want.Object, out.(*unstructured.Unstructured).Object)
	require.Equal(t, map[string]string{"model.aibom.dev/name": "meta-llama/Llama-3.1-8B-Instruct"}, obj.GetAnnotations())

	again, err := TransformTracked(obj.DeepCopy())
	require.NoError(t, err)
	require.Equal(t, want.Object, again.(*unstructured.Unstructured).Object)

	// An object whose only annotation was last-applied has none left.
	only := coretest.DecodeYAML(t, trackedYAML)
	only.SetAnnotations(map[string]string{graph.LastAppliedAnnotation: "{}"})
	_, _ = TransformTracked(only)
	require.NotContains(t, only.Object["metadata"], "annotations")
}

func TestTransformMetadataOnPartialObjectMetadata(t *testing.T) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "rs", Namespace: "ns", UID: "u1", ResourceVersion: "3",
		Labels:          map[string]string{"app": "x"},
		Annotations:     map[string]string{graph.LastAppliedAnnotation: "{}", "deployment.kubernetes.io/revision": "2"},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "u0"}},
	}}
	m.SetGroupVersionKind(coretest.RsGVK)
	out, err := graph.TransformMetadata(m)
	require.NoError(t, err)
	got := out.(*metav1.PartialObjectMetadata)
	require.Nil(t, got.ManagedFields)
	require.Equal(t, map[string]string{"deployment.kubernetes.io/revision": "2"}, got.Annotations)
	require.Equal(t, map[string]string{"app": "x"}, got.Labels)
	require.Len(t, got.OwnerReferences, 1)
	require.Equal(t, coretest.RsGVK, got.GroupVersionKind())

	m.Annotations = map[string]string{graph.LastAppliedAnnotation: "{}"}
	_, _ = graph.TransformMetadata(m)
	require.Nil(t, m.Annotations)

	// A typed object (the manager cache's AIBOMs): managed fields only.
	typed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{graph.LastAppliedAnnotation: "{}"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err = graph.TransformMetadata(typed)
	require.NoError(t, err)
	require.Nil(t, out.(*corev1.Pod).ManagedFields)
	require.Equal(t, map[string]string{graph.LastAppliedAnnotation: "{}"}, out.(*corev1.Pod).Annotations)
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
		obj := coretest.DecodeYAML(t, coretest.FullPodYAML)
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
		"tombstone": func() any {
			return toolscache.DeletedFinalStateUnknown{Key: "ns/x", Obj: coretest.DecodeYAML(t, coretest.FullPodYAML)}
		},
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
			return raw(map[string]any{"metadata": map[string]any{"annotations": map[string]any{graph.LastAppliedAnnotation: nil}}})
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
			"pod": TransformPod, "tracked": TransformTracked, "metadata": graph.TransformMetadata, "aibom": reconcile.TransformAIBOM,
			"supervisor pod":      sup.transform(coretest.EntryOf(t, reg, coretest.PodGVK)),
			"supervisor tracked":  sup.transform(coretest.EntryOf(t, reg, coretest.DeployGVK)),
			"supervisor walkonly": sup.transform(coretest.EntryOf(t, reg, coretest.RsGVK)),
		} {
			require.NotPanics(t, func() {
				out, err := tf(input())
				require.NoError(t, err, "%s on %s", tname, name)
				// The result is still something the core can read.
				if o, ok := out.(client.Object); ok && out != nil && !isNilPointer(out) {
					_ = graph.ControllerUID(o)
					if u, ok := o.(*unstructured.Unstructured); ok {
						// What the event mapper and the digest resolver read.
						_, _, _ = unstructured.NestedSlice(u.Object, "status", "containerStatuses")
						_, _, _ = unstructured.NestedSlice(u.Object, "status", "initContainerStatuses")
						_ = u.GetOwnerReferences()
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

// TestTransformPodForKeepsWhatAGenericRootReads: a pod nothing controls (or
// controlled by a kind no adapter declares) keeps its containers and its
// model annotations, and no other annotation; a pod under a declared kind
// keeps neither.
func TestTransformPodForKeepsWhatAGenericRootReads(t *testing.T) {
	reg := coretest.TestRegistry(t)
	pod := func(controller string) *unstructured.Unstructured {
		p := coretest.DecodeYAML(t, coretest.FullPodYAML)
		p.SetAnnotations(map[string]string{
			"model.aibom.dev/name":                             "Qwen/Qwen2.5-7B-Instruct",
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Pod"}`,
			"team": "inference",
		})
		p.SetOwnerReferences(nil)
		if controller != "" {
			p.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: controller, Kind: map[string]string{"apps/v1": "ReplicaSet", "serving.example.com/v1": "ServingGroup"}[controller], Name: "owner", UID: "u1", Controller: ptr.To(true)}})
		}
		return p
	}
	for _, tc := range []struct {
		name       string
		controller string
		whole      bool
	}{
		{"bare pod", "", true},
		{"pod of a kind no adapter declares", "serving.example.com/v1", true},
		{"pod of a ReplicaSet", "apps/v1", false},
	} {
		out, err := TransformPodFor(reg)(pod(tc.controller))
		require.NoError(t, err, tc.name)
		u := out.(*unstructured.Unstructured)
		if !tc.whole {
			require.NotContains(t, u.Object, "spec", tc.name)
			require.Empty(t, u.GetAnnotations(), tc.name)
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
		require.NotEmpty(t, containers, tc.name)
		require.Equal(t, map[string]string{"model.aibom.dev/name": "Qwen/Qwen2.5-7B-Instruct"}, u.GetAnnotations(), tc.name)
	}
}
