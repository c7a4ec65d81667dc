package operators

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const vllmImage = "vllm/vllm-openai:v0.8.5"

// vllmLWS is a two-node vLLM LeaderWorkerSet in the style of the LWS vLLM
// example: one group, a leader and one worker.
const vllmLWS = `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  replicas: 1
  startupPolicy: LeaderCreated
  leaderWorkerTemplate:
    size: 2
    restartPolicy: RecreateGroupOnPodRestart
    leaderTemplate:
      metadata: {labels: {role: leader}}
      spec:
        containers:
        - name: vllm-leader
          image: ` + vllmImage + `
          command: [sh, -c, "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE); python3 -m vllm.entrypoints.openai.api_server --port 8080 --model meta-llama/Meta-Llama-3.1-405B-Instruct --tensor-parallel-size 8 --pipeline_parallel_size 2"]
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: ` + vllmImage + `
          command: [sh, -c, "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)"]
`

// leaderStatefulSet is the leader StatefulSet "vllm" the LWS controller
// creates; owner is its ownerReferences line ("" for none).
func leaderStatefulSet(owner string) string {
	return `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm
  labels: {leaderworkerset.sigs.k8s.io/name: vllm}
  annotations: {leaderworkerset.sigs.k8s.io/replicas: "1"}
` + owner + `
spec:
  replicas: 1
  serviceName: vllm
  selector: {matchLabels: {leaderworkerset.sigs.k8s.io/name: vllm, leaderworkerset.sigs.k8s.io/worker-index: "0"}}
  template:
    metadata: {labels: {leaderworkerset.sigs.k8s.io/name: vllm, leaderworkerset.sigs.k8s.io/worker-index: "0", role: leader}}
    spec:
      containers: [{name: vllm-leader, image: ` + vllmImage + `}]
`
}

const ownedByLWS = `  ownerReferences: [{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: vllm, controller: true, blockOwnerDeletion: true}]`

const leaderPodLabels = `{leaderworkerset.sigs.k8s.io/name: vllm, leaderworkerset.sigs.k8s.io/group-index: "0", leaderworkerset.sigs.k8s.io/worker-index: "0", statefulset.kubernetes.io/pod-name: vllm-0, role: leader}`

// workerGroup is the worker StatefulSet "vllm-0", controlled by the leader
// Pod "vllm-0" as the LWS pod controller sets it, and its worker pod
// "vllm-0-1".
var workerGroup = `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm-0
  labels: {leaderworkerset.sigs.k8s.io/name: vllm, leaderworkerset.sigs.k8s.io/group-index: "0"}
  ownerReferences: [{apiVersion: v1, kind: Pod, name: vllm-0, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  ordinals: {start: 1}
  serviceName: vllm
  selector: {matchLabels: {leaderworkerset.sigs.k8s.io/name: vllm, leaderworkerset.sigs.k8s.io/group-index: "0"}}
  template:
    metadata: {labels: {leaderworkerset.sigs.k8s.io/name: vllm, leaderworkerset.sigs.k8s.io/group-index: "0"}}
    spec:
      containers: [{name: vllm-worker, image: ` + vllmImage + `}]
` + "---" + podYAML("vllm-0-1", "apps/v1", "StatefulSet", "vllm-0",
	`{leaderworkerset.sigs.k8s.io/name: vllm, leaderworkerset.sigs.k8s.io/group-index: "0", leaderworkerset.sigs.k8s.io/worker-index: "1", statefulset.kubernetes.io/pod-name: vllm-0-1}`,
	ctr{"vllm-worker", vllmImage, workerDigest})

// Seed Testing, envtest: LeaderWorkerSet -> StatefulSet. The StatefulSet
// exists alone first and has its own AIBOM; once the LWS adopts it (its
// controller ownerReference is added) that AIBOM is deleted, and the LWS
// document lists it and resolves the digest from the StatefulSet's pod.
func TestLWSAdoptsStatefulSetAndResolvesItsPodDigest(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	objs := c.env.MustApply(t, ns, leaderStatefulSet("")+"---"+
		podYAML("vllm-0", "apps/v1", "StatefulSet", "vllm", leaderPodLabels, ctr{"vllm-leader", vllmImage, leaderDigest}))
	sts := objs[0]
	alone := c.waitAIBOM(t, ns, statefulSetGK, "vllm", hasDigest("", "vllm-leader", leaderDigest))
	requireAbsorbed(t, alone)
	requireDigestFromPod(t, alone.Status.Document, "", "vllm-leader", leaderDigest, "vllm-0", "vllm-leader")

	lws := c.env.MustApply(t, ns, vllmLWS)[0]
	before := c.waitAIBOM(t, ns, lwsGK, "vllm", nil)
	requireAbsorbed(t, before)
	require.Empty(t, container(t, before.Status.Document, "leader", "vllm-leader").digest, "no pod reaches the LWS yet")

	// The LWS controller adopts the StatefulSet.
	cur := c.get(t, sts)
	cur.SetOwnerReferences([]metav1.OwnerReference{harness.ControllerRef(lws)})
	require.NoError(t, c.env.Client.Update(context.Background(), cur))

	c.waitNoAIBOM(t, ns, statefulSetGK, "vllm")
	a := c.waitAIBOM(t, ns, lwsGK, "vllm", all(absorbedLen(1), hasDigest("leader", "vllm-leader", leaderDigest)))
	requireAbsorbed(t, a, "StatefulSet.apps/vllm")
	requireDigestFromPod(t, a.Status.Document, "leader", "vllm-leader", leaderDigest, "vllm-0", "vllm-leader")
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	c.waitOnlyAIBOMs(t, ns, "LeaderWorkerSet/vllm")
}

// Seed Testing, envtest: the multi-node chain as the LWS controller builds
// it: LWS -> leader StatefulSet "vllm" -> leader Pod "vllm-0" -> worker
// StatefulSet "vllm-0" (controlled by the leader Pod) -> worker Pod
// "vllm-0-1". One AIBOM, both StatefulSets absorbed, the leader's and the
// worker's digests both in the document.
func TestLWSMultiNodeChainThroughTheLeaderPod(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	c.env.MustApply(t, ns, vllmLWS+"---"+leaderStatefulSet(ownedByLWS)+"---"+
		podYAML("vllm-0", "apps/v1", "StatefulSet", "vllm", leaderPodLabels, ctr{"vllm-leader", vllmImage, leaderDigest})+"---"+
		workerGroup)

	a := c.waitAIBOM(t, ns, lwsGK, "vllm", all(absorbedLen(2),
		hasDigest("leader", "vllm-leader", leaderDigest), hasDigest("worker", "vllm-worker", workerDigest)))
	requireAbsorbed(t, a, "StatefulSet.apps/vllm", "StatefulSet.apps/vllm-0")
	requireDigestFromPod(t, a.Status.Document, "leader", "vllm-leader", leaderDigest, "vllm-0", "vllm-leader")
	requireDigestFromPod(t, a.Status.Document, "worker", "vllm-worker", workerDigest, "vllm-0-1", "vllm-worker")
	c.waitOnlyAIBOMs(t, ns, "LeaderWorkerSet/vllm")
}
