package operators

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const dynamoImage = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"

// Graph "vllm-disagg" with one decode worker, on the component provider
// (Grove disabled), in both API shapes.
const (
	graphV1beta1 = `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: vllm-disagg
  annotations: {nvidia.com/enable-grove: "false"}
spec:
  backendFramework: vllm
  components:
  - name: VllmDecodeWorker
    type: decode
    replicas: 1
    podTemplate:
      spec:
        containers:
        - name: main
          image: ` + dynamoImage + `
          command: [python3, -m, dynamo.vllm]
          args: [--model, Qwen/Qwen3-0.6B]
`
	graphV1alpha1 = `
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: vllm-disagg
  annotations: {nvidia.com/enable-grove: "false"}
spec:
  services:
    VllmDecodeWorker:
      dynamoNamespace: vllm-disagg
      componentType: worker
      subComponentType: decode
      replicas: 1
      extraPodSpec:
        mainContainer:
          image: ` + dynamoImage + `
          command: [/bin/sh, -c]
          args: ["python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B"]
`
)

// dcd renders the DynamoComponentDeployment "vllm-disagg-vllmdecodeworker"
// in apiVersion nvidia.com/<version>, controlled by the graph when owned.
func dcd(version string, owned bool) string {
	owner := ""
	if owned {
		owner = `
  ownerReferences: [{apiVersion: nvidia.com/` + version + `, kind: DynamoGraphDeployment, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]`
	}
	spec := `
  backendFramework: vllm
  name: VllmDecodeWorker
  type: decode
  replicas: 1
  podTemplate:
    spec:
      containers:
      - name: main
        image: ` + dynamoImage + `
        command: [python3, -m, dynamo.vllm]
        args: [--model, Qwen/Qwen3-0.6B]`
	if version == "v1alpha1" {
		spec = `
  backendFramework: vllm
  serviceName: VllmDecodeWorker
  dynamoNamespace: vllm-disagg
  componentType: worker
  subComponentType: decode
  replicas: 1
  extraPodSpec:
    mainContainer:
      image: ` + dynamoImage + `
      command: [/bin/sh, -c]
      args: ["python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B"]`
	}
	return `
apiVersion: nvidia.com/` + version + `
kind: DynamoComponentDeployment
metadata:
  name: vllm-disagg-vllmdecodeworker
  labels: {nvidia.com/dynamo-graph-deployment-name: vllm-disagg}` + owner + `
spec:` + spec + "\n"
}

const decodePodLabels = `{nvidia.com/dynamo-graph-deployment-name: vllm-disagg, nvidia.com/dynamo-component: VllmDecodeWorker, nvidia.com/dynamo-component-type: decode, nvidia.com/selector: vllm-disagg-vllmdecodeworker, pod-template-hash: 7c9d8b6f4d}`

// dcdDeploymentChain is what the DCD controller and kube-controller-manager
// build under DCD "vllm-disagg-vllmdecodeworker" (nvidia.com/<version>): a
// Deployment of the same name, its ReplicaSet and a running pod whose main
// container is named "main", next to a metrics sidecar of another image.
func dcdDeploymentChain(version string) string {
	return `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-disagg-vllmdecodeworker
  labels: {nvidia.com/dynamo-graph-deployment-name: vllm-disagg}
  ownerReferences: [{apiVersion: nvidia.com/` + version + `, kind: DynamoComponentDeployment, name: vllm-disagg-vllmdecodeworker, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  selector: {matchLabels: {nvidia.com/selector: vllm-disagg-vllmdecodeworker}}
  template:
    metadata: {labels: {nvidia.com/selector: vllm-disagg-vllmdecodeworker, nvidia.com/dynamo-graph-deployment-name: vllm-disagg}}
    spec:
      containers:
      - {name: main, image: ` + dynamoImage + `, command: [python3, -m, dynamo.vllm], args: [--model, Qwen/Qwen3-0.6B]}
      - {name: metrics-exporter, image: "prom/statsd-exporter:v0.26.0"}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: vllm-disagg-vllmdecodeworker-7c9d8b6f4d
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: vllm-disagg-vllmdecodeworker, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  selector: {matchLabels: {nvidia.com/selector: vllm-disagg-vllmdecodeworker, pod-template-hash: 7c9d8b6f4d}}
  template:
    metadata: {labels: {nvidia.com/selector: vllm-disagg-vllmdecodeworker, pod-template-hash: 7c9d8b6f4d}}
    spec:
      containers: [{name: main, image: ` + dynamoImage + `}]
---` + podYAML("vllm-disagg-vllmdecodeworker-7c9d8b6f4d-x7k2p", "apps/v1", "ReplicaSet", "vllm-disagg-vllmdecodeworker-7c9d8b6f4d", decodePodLabels,
		ctr{"main", dynamoImage, decodeDigest}, ctr{"metrics-exporter", "prom/statsd-exporter:v0.26.0", leaderDigest})
}

const decodePod = "vllm-disagg-vllmdecodeworker-7c9d8b6f4d-x7k2p"

// Seed Testing, envtest: DynamoGraphDeployment -> DynamoComponentDeployment
// -> Deployment (-> ReplicaSet -> Pod): one document, the graph's, which
// absorbs the DCD and the Deployment and reads the digest of the pod's
// container named "main"; in both API shapes.
func TestDynamoGraphAbsorbsComponentAndDeployment(t *testing.T) {
	for _, tc := range []struct {
		version string
		c       **cluster
		graph   string
	}{
		{"v1beta1", &beta, graphV1beta1},
		{"v1alpha1", &alpha, graphV1alpha1},
	} {
		t.Run(tc.version, func(t *testing.T) {
			c := *tc.c
			ns := c.newNamespace(t)
			c.env.MustApply(t, ns, tc.graph+"---"+dcd(tc.version, true)+"---"+dcdDeploymentChain(tc.version))

			a := c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", all(absorbedLen(2), hasDigest("VllmDecodeWorker", "main", decodeDigest)))
			require.Equal(t, "nvidia.com/"+tc.version, a.Spec.Subject.APIVersion)
			requireAbsorbed(t, a, "Deployment.apps/vllm-disagg-vllmdecodeworker", "DynamoComponentDeployment.nvidia.com/vllm-disagg-vllmdecodeworker")
			requireDigestFromPod(t, a.Status.Document, "VllmDecodeWorker", "main", decodeDigest, decodePod, "main")
			require.Len(t, docContainers(t, a.Status.Document), 1, "the graph declares only the main container")
			require.Equal(t, "vllm", a.Status.Summary.Runtime)
			require.Equal(t, "Qwen/Qwen3-0.6B", a.Status.Summary.Model)
			c.waitOnlyAIBOMs(t, ns, "DynamoGraphDeployment/vllm-disagg")
		})
	}
}

// Seed Testing, envtest: DGD -> DCD -> LeaderWorkerSet (multi-node) ->
// StatefulSet -> Pods, as the component provider builds a multinode
// component when the LWS gate is on: LWS "<dcd>-0", leader StatefulSet of
// the same name, leader Pod "<lws>-0", worker StatefulSet "<lws>-0"
// controlled by the leader Pod, worker Pod "<lws>-0-1". One document.
func TestDynamoGraphMultiNodeThroughLeaderWorkerSet(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const lws = "vllm-disagg-decode-0"
	labels := func(pod, worker string) string {
		return `{nvidia.com/dynamo-graph-deployment-name: vllm-disagg, nvidia.com/dynamo-component: decode, leaderworkerset.sigs.k8s.io/name: ` + lws +
			`, leaderworkerset.sigs.k8s.io/group-index: "0", leaderworkerset.sigs.k8s.io/worker-index: "` + worker + `", statefulset.kubernetes.io/pod-name: ` + pod + `}`
	}
	objs := c.env.MustApply(t, ns, `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: vllm-disagg
  annotations: {nvidia.com/enable-grove: "false"}
spec:
  backendFramework: vllm
  components:
  - name: decode
    type: decode
    replicas: 1
    multinode: {nodeCount: 2}
    podTemplate:
      spec:
        containers:
        - {name: main, image: `+dynamoImage+`, command: [python3, -m, dynamo.vllm], args: [--model, meta-llama/Llama-3.1-405B-Instruct, --tensor-parallel-size, "16"]}
---
apiVersion: nvidia.com/v1beta1
kind: DynamoComponentDeployment
metadata:
  name: vllm-disagg-decode
  labels: {nvidia.com/dynamo-graph-deployment-name: vllm-disagg}
  ownerReferences: [{apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  backendFramework: vllm
  name: decode
  type: decode
  replicas: 1
  multinode: {nodeCount: 2}
  podTemplate:
    spec:
      containers:
      - {name: main, image: `+dynamoImage+`, command: [python3, -m, dynamo.vllm], args: [--model, meta-llama/Llama-3.1-405B-Instruct, --tensor-parallel-size, "16"]}
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: `+lws+`
  ownerReferences: [{apiVersion: nvidia.com/v1beta1, kind: DynamoComponentDeployment, name: vllm-disagg-decode, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  startupPolicy: LeaderCreated
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers: [{name: main, image: `+dynamoImage+`, command: [python3, -m, dynamo.vllm], args: [--model, meta-llama/Llama-3.1-405B-Instruct]}]
    workerTemplate:
      spec:
        containers: [{name: main, image: `+dynamoImage+`, command: [python3, -m, dynamo.vllm], args: [--model, meta-llama/Llama-3.1-405B-Instruct, --headless]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: `+lws+`
  ownerReferences: [{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: `+lws+`, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  serviceName: `+lws+`
  selector: {matchLabels: {leaderworkerset.sigs.k8s.io/name: `+lws+`, leaderworkerset.sigs.k8s.io/worker-index: "0"}}
  template:
    metadata: {labels: {leaderworkerset.sigs.k8s.io/name: `+lws+`, leaderworkerset.sigs.k8s.io/worker-index: "0"}}
    spec: {containers: [{name: main, image: `+dynamoImage+`}]}
---`+podYAML(lws+"-0", "apps/v1", "StatefulSet", lws, labels(lws+"-0", "0"), ctr{"main", dynamoImage, ""})+`
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: `+lws+`-0
  ownerReferences: [{apiVersion: v1, kind: Pod, name: `+lws+`-0, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  ordinals: {start: 1}
  serviceName: `+lws+`
  selector: {matchLabels: {leaderworkerset.sigs.k8s.io/name: `+lws+`, leaderworkerset.sigs.k8s.io/group-index: "0"}}
  template:
    metadata: {labels: {leaderworkerset.sigs.k8s.io/name: `+lws+`, leaderworkerset.sigs.k8s.io/group-index: "0"}}
    spec: {containers: [{name: main, image: `+dynamoImage+`}]}
---`+podYAML(lws+"-0-1", "apps/v1", "StatefulSet", lws+"-0", labels(lws+"-0-1", "1"), ctr{"main", dynamoImage, decodeDigest}))

	// The worker pulled its image first: only the worker pod, reached through
	// the leader Pod and the worker StatefulSet, can give the digest.
	want := []string{"DynamoComponentDeployment.nvidia.com/vllm-disagg-decode", "LeaderWorkerSet.leaderworkerset.x-k8s.io/" + lws, "StatefulSet.apps/" + lws, "StatefulSet.apps/" + lws + "-0"}
	a := c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", all(absorbedLen(len(want)), hasDigest("decode", "main", decodeDigest)))
	requireAbsorbed(t, a, want...)
	requireDigestFromPod(t, a.Status.Document, "decode", "main", decodeDigest, lws+"-0-1", "main")

	// Then the leader runs the same image: it is attributed too (it sorts
	// first, so the document now cites it).
	setPodDigest(t, c, objs[4], "main", dynamoImage, decodeDigest)
	a = c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", citesPod("decode", "main", lws+"-0", "main"))
	requireAbsorbed(t, a, want...)
	requireDigestFromPod(t, a.Status.Document, "decode", "main", decodeDigest, lws+"-0", "main")
	c.waitOnlyAIBOMs(t, ns, "DynamoGraphDeployment/vllm-disagg")
}

// Seed §4 and Testing: a DynamoComponentDeployment without an owner is its
// own root, scraped as a one-component graph, absorbing its Deployment and
// reading the digest from the Deployment's pod; in both API shapes.
func TestStandaloneDynamoComponentDeploymentIsARoot(t *testing.T) {
	for _, tc := range []struct {
		version string
		c       **cluster
	}{
		{"v1beta1", &beta},
		{"v1alpha1", &alpha},
	} {
		t.Run(tc.version, func(t *testing.T) {
			c := *tc.c
			ns := c.newNamespace(t)
			c.env.MustApply(t, ns, dcd(tc.version, false)+"---"+dcdDeploymentChain(tc.version))

			a := c.waitAIBOM(t, ns, dcdGK, "vllm-disagg-vllmdecodeworker", all(absorbedLen(1), hasDigest("VllmDecodeWorker", "main", decodeDigest)))
			require.Equal(t, "DynamoComponentDeployment", a.Spec.Subject.Kind)
			requireAbsorbed(t, a, "Deployment.apps/vllm-disagg-vllmdecodeworker")
			requireDigestFromPod(t, a.Status.Document, "VllmDecodeWorker", "main", decodeDigest, decodePod, "main")
			require.Contains(t, a.Status.Document, `"dynamo.component.0.name"`)
			require.NotContains(t, a.Status.Document, `"dynamo.component.1.name"`, "a one-component graph")
			require.Equal(t, "vllm", a.Status.Summary.Runtime)
			c.waitOnlyAIBOMs(t, ns, "DynamoComponentDeployment/vllm-disagg-vllmdecodeworker")
		})
	}
}

// setPodDigest writes the status a kubelet writes once container name runs
// image at digest d.
func setPodDigest(t *testing.T, c *cluster, pod *unstructured.Unstructured, name, image, d string) {
	t.Helper()
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(pod.GroupVersionKind())
	require.NoError(t, c.env.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), cur))
	statuses, _, err := unstructured.NestedSlice(cur.Object, "status", "containerStatuses")
	require.NoError(t, err)
	repo := imageRepo(image)
	found := false
	for _, s := range statuses {
		m := s.(map[string]any)
		if m["name"] != name {
			continue
		}
		found = true
		m["image"] = image
		m["imageID"] = repo + "@sha256:" + d
		m["ready"] = true
		m["state"] = map[string]any{"running": map[string]any{}}
	}
	require.True(t, found, "pod %s has no container status %q", pod.GetName(), name)
	require.NoError(t, unstructured.SetNestedSlice(cur.Object, statuses, "status", "containerStatuses"))
	require.NoError(t, c.env.Client.Status().Update(context.Background(), cur))
}
