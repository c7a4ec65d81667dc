package faults

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const vllmImage = "vllm/vllm-openai:v0.8.5"

var (
	leaderDigest = digestOf("leader")
	workerDigest = digestOf("worker")
)

// lwsObject is a two-node vLLM LeaderWorkerSet.
const lwsObject = `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
        - {name: vllm-leader, image: "` + vllmImage + `", args: ["--model", "Qwen/Qwen2.5-0.5B"]}
    workerTemplate:
      spec:
        containers:
        - {name: vllm-worker, image: "` + vllmImage + `"}
`

// lwsChildren is what the LWS controller builds under it: the leader
// StatefulSet "vllm", its leader Pod "vllm-0", the worker StatefulSet
// "vllm-0" controlled by that Pod, and the worker Pod "vllm-0-1".
var lwsChildren = `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm
  ownerReferences: [{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: vllm, controller: true, blockOwnerDeletion: true}]
spec:
  serviceName: vllm
  selector: {matchLabels: {role: leader}}
  template:
    metadata: {labels: {role: leader}}
    spec: {containers: [{name: vllm-leader, image: "` + vllmImage + `"}]}
---` + harness.PodYAML("vllm-0", "apps/v1", "StatefulSet", "vllm", "vllm-leader", vllmImage, leaderDigest) + `
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm-0
  ownerReferences: [{apiVersion: v1, kind: Pod, name: vllm-0, controller: true, blockOwnerDeletion: true}]
spec:
  serviceName: vllm
  selector: {matchLabels: {role: worker}}
  template:
    metadata: {labels: {role: worker}}
    spec: {containers: [{name: vllm-worker, image: "` + vllmImage + `"}]}
---` + harness.PodYAML("vllm-0-1", "apps/v1", "StatefulSet", "vllm-0", "vllm-worker", vllmImage, workerDigest)

// settle waits until the controller stopped writing AIBOMs and checks the
// invariant once more: a converged state that holds, not one passed through.
func settle(t *testing.T, namespaces ...string) {
	t.Helper()
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))
	require.NoError(t, conservation(namespaces...).Verify(context.Background()))
}

// An LWS deleted with propagationPolicy=Orphan, its children lingering,
// against Kubernetes' own garbage collector (started for this test only:
// the suite's other tests need dangling references the collector would
// remove). The collector takes the LWS's references off its dependents,
// then lets the LWS go. The leader StatefulSet becomes a root and absorbs
// the worker StatefulSet (through the leader Pod), with its leader pod's
// digest; the LWS's AIBOM goes, and no child ever reports under the LWS's
// tree twice.
func TestLWSDeletedWithOrphanPropagation(t *testing.T) {
	ctx := context.Background()
	kcm, err := controlplane.StartControllerManager(env.Env, []string{"garbage-collector-controller"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = kcm.Stop() })

	ns := newNamespace(t)
	lws := env.MustApply(t, ns, lwsObject+"---"+lwsChildren)[0]
	conservation(ns).Eventually(t, eventually)
	a := getAIBOM(t, harness.AIBOMKey(ns, lwsGK, "vllm"))
	require.Equal(t, []string{"StatefulSet.apps/vllm", "StatefulSet.apps/vllm-0"}, a.Status.Absorbed)

	require.NoError(t, env.Client.Delete(ctx, lws, client.PropagationPolicy(metav1.DeletePropagationOrphan)))
	require.Eventually(t, func() bool {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(lws.GetObjectKind().GroupVersionKind())
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lws), u))
	}, eventually, tick, "the garbage collector never let the LWS go")
	leader := getObject(t, "apps/v1", "StatefulSet", client.ObjectKey{Namespace: ns, Name: "vllm"})
	require.NotNil(t, leader, "orphaned, not deleted")
	require.Empty(t, leader.GetOwnerReferences(), "the collector took the LWS's reference off")

	rep := conservation(ns).Eventually(t, eventually)
	require.Equal(t, 1, rep.AIBOMs)
	require.Nil(t, getAIBOM(t, harness.AIBOMKey(ns, lwsGK, "vllm")))
	root := requireEventuallyAIBOM(t, harness.AIBOMKey(ns, statefulSetGK, "vllm"), leaderDigest)
	require.Equal(t, []string{"StatefulSet.apps/vllm-0"}, root.Status.Absorbed)
	settle(t, ns)
}

// An LWS deleted without a garbage collector to remove its children (they
// keep a controller reference to the old UID), then re-created under the same
// name: the leader StatefulSet, a root since the deletion, keeps its AIBOM
// (same object), and the new LWS absorbs nothing and gets no pod's digest.
func TestRecreatedLWSDoesNotAdoptStaleStatefulSets(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	old := env.MustApply(t, ns, lwsObject+"---"+lwsChildren)[0]
	conservation(ns).Eventually(t, eventually)

	require.NoError(t, env.Client.Delete(ctx, old))
	conservation(ns).Eventually(t, eventually)
	stale := requireEventuallyAIBOM(t, harness.AIBOMKey(ns, statefulSetGK, "vllm"), leaderDigest)
	require.Equal(t, []string{"StatefulSet.apps/vllm-0"}, stale.Status.Absorbed)

	fresh := env.MustApply(t, ns, lwsObject)[0]
	require.NotEqual(t, old.GetUID(), fresh.GetUID())
	require.Eventually(t, func() bool {
		a := getAIBOM(t, harness.AIBOMKey(ns, lwsGK, "vllm"))
		return a != nil && a.Spec.Subject.UID == string(fresh.GetUID())
	}, eventually, tick)
	rep := conservation(ns).Eventually(t, eventually)
	require.Equal(t, 2, rep.Roots)
	settle(t, ns)
	a := getAIBOM(t, harness.AIBOMKey(ns, lwsGK, "vllm"))
	require.Empty(t, a.Status.Absorbed, "the stale StatefulSets name the old UID")
	require.NotContains(t, a.Status.Document, leaderDigest, "nor are their pods attributed")
	require.NotContains(t, a.Status.Document, workerDigest)
	still := getAIBOM(t, harness.AIBOMKey(ns, statefulSetGK, "vllm"))
	require.Equal(t, stale.UID, still.UID, "the stale leader StatefulSet's AIBOM was kept")
	require.Equal(t, []string{"StatefulSet.apps/vllm-0"}, still.Status.Absorbed)
}

// requireEventuallyAIBOM waits until the AIBOM's document names every digest.
func requireEventuallyAIBOM(t *testing.T, key client.ObjectKey, digests ...string) *v1alpha1.AIBOM {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, d := range digests {
			if !hasDigest(t, key, d) {
				return false
			}
		}
		return true
	}, eventually, tick, "AIBOM %s never named %v", key, digests)
	return getAIBOM(t, key)
}
