package scan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// A held object inflates to the object it was made from, values and their
// types included, with the identity as it is now (changed after holding:
// naming and owner resolution change it); each inflation is a new object.
func TestHeldObjectInflatesToTheWholeObject(t *testing.T) {
	reg := registry(t)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{"replicas": int64(2), "ratio": 1.0, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "vllm", "image": "vllm/vllm-openai:v0.6.3", "args": []any{"--model", "Qwen/Qwen2.5-0.5B"}}}}}},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
	want := u.DeepCopy()
	h := hold(reg, u)
	require.NotNil(t, h)
	_, hasSpec := h.Object["spec"]
	require.False(t, hasSpec, "the held identity carries no spec")
	whole, err := h.Inflate()
	require.NoError(t, err)
	require.Equal(t, want.Object, whole.(*unstructured.Unstructured).Object)

	h.SetUID("u-1")
	again, err := h.Inflate()
	require.NoError(t, err)
	require.Equal(t, "u-1", string(again.GetUID()))
	again.(*unstructured.Unstructured).Object["spec"].(map[string]any)["replicas"] = int64(9)
	third, _ := h.Inflate()
	require.Equal(t, int64(2), third.(*unstructured.Unstructured).Object["spec"].(map[string]any)["replicas"], "inflations share nothing")

	// Through the store: whole reads inflate, metadata reads do not.
	store := graph.NewMemoryStore([]client.Object{h})
	e, _ := reg.Lookup(h.GroupVersionKind().GroupKind())
	got, err := store.Get(context.Background(), e, "ns", "web")
	require.NoError(t, err)
	_, hasSpec = got.(*unstructured.Unstructured).Object["spec"]
	require.True(t, hasSpec)
	meta, err := store.GetMetadata(context.Background(), e, "ns", "web")
	require.NoError(t, err)
	require.Same(t, h, meta)

	// Kept decoded: pods (their status is read) and kinds no adapter declares.
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}}}
	require.Nil(t, hold(reg, pod))
	thing := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.io/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"}}}
	require.Nil(t, hold(reg, thing))
}

// Offline no garbage collector is about to act: a ReplicaSet whose
// Deployment is not in the input is decided as the controller decides it
// once the dangling-owner grace has passed, the generic root of its pod,
// which would otherwise be in no document.
func TestDanglingOwnerReferenceOfflineIsDecidedAsPastTheGrace(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "rs.yaml", `
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-5f7d
  namespace: ns
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: 11111111-1111-1111-1111-111111111111, controller: true}]
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-5f7d-x
  namespace: ns
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5f7d, controller: true}]
spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3"}]}
`)
	roots := loadRoots(t, p)
	require.Len(t, roots, 1)
	require.True(t, roots[0].Generic)
	require.Equal(t, "ReplicaSet", roots[0].Object.GetKind())
	require.Len(t, roots[0].Descendants.Pods, 1)
}
