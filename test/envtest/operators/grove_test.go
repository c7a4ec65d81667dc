package operators

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Grove provider (operators.md §1.5 C, §2): the graph controls a
// PodCliqueSet of its own name; no DCD sits in between. Grove kinds are
// walk-only: they connect the graph to its pods and are never listed.

// groveGraph is a v1beta1 graph with one component, left on the Grove path.
func groveGraph(component, nodeCount string) string {
	multinode := ""
	if nodeCount != "" {
		multinode = "\n    multinode: {nodeCount: " + nodeCount + "}"
	}
	return `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: vllm-disagg}
spec:
  backendFramework: vllm
  components:
  - name: ` + component + `
    type: decode
    replicas: 1` + multinode + `
    podTemplate:
      spec:
        containers:
        - {name: main, image: ` + dynamoImage + `, command: [python3, -m, dynamo.vllm], args: [--model, Qwen/Qwen3-0.6B]}
`
}

const podCliqueSet = `
apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: vllm-disagg
  labels: {app.kubernetes.io/managed-by: dynamo-operator, nvidia.com/dynamo-graph-deployment-name: vllm-disagg}
  ownerReferences: [{apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  template:
    cliques:
    - name: vllmdecodeworker
      spec:
        roleName: vllmdecodeworker
        replicas: 1
        podSpec:
          containers: [{name: main, image: ` + dynamoImage + `}]
`

// directClique is the standalone PodClique of component VllmDecodeWorker.
const directClique = `
apiVersion: grove.io/v1alpha1
kind: PodClique
metadata:
  name: vllm-disagg-0-vllmdecodeworker
  labels: {nvidia.com/dynamo-graph-deployment-name: vllm-disagg, nvidia.com/dynamo-component: VllmDecodeWorker, grove.io/podclique: vllm-disagg-0-vllmdecodeworker}
  ownerReferences: [{apiVersion: grove.io/v1alpha1, kind: PodCliqueSet, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  roleName: vllmdecodeworker
  replicas: 1
  podSpec:
    containers: [{name: main, image: ` + dynamoImage + `}]
`

func groveWorkerPod(name, clique, d string) string {
	return podYAML(name, "grove.io/v1alpha1", "PodClique", clique,
		`{nvidia.com/dynamo-graph-deployment-name: vllm-disagg, nvidia.com/dynamo-component: VllmDecodeWorker, nvidia.com/selector: vllm-disagg-vllmdecodeworker, app.kubernetes.io/managed-by: grove-operator, app.kubernetes.io/part-of: vllm-disagg, app.kubernetes.io/component: pcs-podclique, grove.io/podclique: `+clique+`, grove.io/podgang: vllm-disagg-0}`,
		ctr{"main", dynamoImage, d})
}

const directPod = "vllm-disagg-0-vllmdecodeworker-x7k2p"

// Seed Testing, envtest Grove, shape 1: DGD -> PodCliqueSet -> PodClique ->
// Pod. The worker pod's digest reaches the graph's document; the Grove
// kinds are not listed as absorbed.
func TestGroveDirectCliqueResolvesWorkerDigest(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	c.env.MustApply(t, ns, groveGraph("VllmDecodeWorker", "")+"---"+podCliqueSet+"---"+directClique+"---"+
		groveWorkerPod(directPod, "vllm-disagg-0-vllmdecodeworker", decodeDigest))

	a := c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", hasDigest("VllmDecodeWorker", "main", decodeDigest))
	requireAbsorbed(t, a) // walk-only kinds only: nothing absorbed
	requireDigestFromPod(t, a.Status.Document, "VllmDecodeWorker", "main", decodeDigest, directPod, "main")
	c.waitOnlyAIBOMs(t, ns, "DynamoGraphDeployment/vllm-disagg")
}

// Seed Testing, envtest Grove, shape 2: DGD -> PodCliqueSet ->
// PodCliqueScalingGroup -> PodClique (leader and worker) -> Pod, for a
// multinode component "decode" with nodeCount 2.
func TestGroveScalingGroupResolvesWorkerDigest(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const (
		pcsg      = "vllm-disagg-0-decode"
		ldr       = "vllm-disagg-0-decode-0-decode-ldr"
		wkr       = "vllm-disagg-0-decode-0-decode-wkr"
		leaderPod = ldr + "-m4q8z"
		workerPod = wkr + "-b7c2d"
	)
	clique := func(name, role string) string {
		return `
apiVersion: grove.io/v1alpha1
kind: PodClique
metadata:
  name: ` + name + `
  labels: {nvidia.com/dynamo-graph-deployment-name: vllm-disagg, grove.io/podcliquescalinggroup: ` + pcsg + `}
  ownerReferences: [{apiVersion: grove.io/v1alpha1, kind: PodCliqueScalingGroup, name: ` + pcsg + `, controller: true, blockOwnerDeletion: true}]
spec:
  roleName: ` + role + `
  replicas: 1
  podSpec:
    containers: [{name: main, image: ` + dynamoImage + `}]
`
	}
	pod := func(name, clique, d string) string {
		return podYAML(name, "grove.io/v1alpha1", "PodClique", clique,
			`{nvidia.com/dynamo-graph-deployment-name: vllm-disagg, nvidia.com/dynamo-component: decode, app.kubernetes.io/component: pcsg-podclique, grove.io/podclique: `+clique+`, grove.io/podcliquescalinggroup: `+pcsg+`, grove.io/podcliquescalinggroup-replica-index: "0"}`,
			ctr{"main", dynamoImage, d})
	}
	objs := c.env.MustApply(t, ns, groveGraph("decode", "2")+`---
apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: vllm-disagg
  ownerReferences: [{apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  template:
    cliques:
    - {name: decode-ldr, spec: {roleName: decode-ldr, replicas: 1, podSpec: {containers: [{name: main, image: `+dynamoImage+`}]}}}
    - {name: decode-wkr, spec: {roleName: decode-wkr, replicas: 1, podSpec: {containers: [{name: main, image: `+dynamoImage+`}]}}}
    podCliqueScalingGroups:
    - {name: decode, cliqueNames: [decode-ldr, decode-wkr], replicas: 1, minAvailable: 1}
---
apiVersion: grove.io/v1alpha1
kind: PodCliqueScalingGroup
metadata:
  name: `+pcsg+`
  ownerReferences: [{apiVersion: grove.io/v1alpha1, kind: PodCliqueSet, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  minAvailable: 1
  cliqueNames: [decode-ldr, decode-wkr]
---`+clique(ldr, "decode-ldr")+"---"+clique(wkr, "decode-wkr")+"---"+
		pod(leaderPod, ldr, "")+"---"+pod(workerPod, wkr, decodeDigest))

	// The leader is still pulling: the digest can only come from the worker
	// pod, through its PodClique and the scaling group.
	a := c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", hasDigest("decode", "main", decodeDigest))
	requireAbsorbed(t, a)
	requireDigestFromPod(t, a.Status.Document, "decode", "main", decodeDigest, workerPod, "main")

	// The leader's status arrives; it is attributed as well (and cited, as it
	// sorts first).
	setPodDigest(t, c, objs[5], "main", dynamoImage, decodeDigest)
	a = c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", citesPod("decode", "main", leaderPod, "main"))
	requireAbsorbed(t, a)
	requireDigestFromPod(t, a.Status.Document, "decode", "main", decodeDigest, leaderPod, "main")
	c.waitOnlyAIBOMs(t, ns, "DynamoGraphDeployment/vllm-disagg")
}

// Seed Testing, envtest Grove: a tenant pod that carries the graph-name
// label nvidia.com/dynamo-graph-deployment-name but belongs to a foreign
// chain (its own ReplicaSet of another Deployment) is not attributed to the
// graph: ownership only, no label.
func TestGroveForeignPodWithGraphLabelIsExcluded(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	// The tenant's chain exists first, and the controller has seen its pod.
	c.env.MustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: tenant-probe}
spec:
  selector: {matchLabels: {app: tenant-probe}}
  template:
    metadata: {labels: {app: tenant-probe, nvidia.com/dynamo-graph-deployment-name: vllm-disagg}}
    spec: {containers: [{name: main, image: `+dynamoImage+`}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: tenant-probe-5f6d7c8b9
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: tenant-probe, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: tenant-probe, pod-template-hash: 5f6d7c8b9}}
  template:
    metadata: {labels: {app: tenant-probe, pod-template-hash: 5f6d7c8b9}}
    spec: {containers: [{name: main, image: `+dynamoImage+`}]}
---`+podYAML("tenant-probe-5f6d7c8b9-qq2xw", "apps/v1", "ReplicaSet", "tenant-probe-5f6d7c8b9",
		`{app: tenant-probe, pod-template-hash: 5f6d7c8b9, nvidia.com/dynamo-graph-deployment-name: vllm-disagg, nvidia.com/dynamo-component: VllmDecodeWorker}`,
		ctr{"main", dynamoImage, lowDigest}))
	tenant := c.waitAIBOM(t, ns, deploymentGK, "tenant-probe", hasDigest("", "main", lowDigest))
	requireAbsorbed(t, tenant)

	c.env.MustApply(t, ns, groveGraph("VllmDecodeWorker", "")+"---"+podCliqueSet+"---"+directClique+"---"+
		groveWorkerPod(directPod, "vllm-disagg-0-vllmdecodeworker", decodeDigest))
	a := c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", hasDigest("VllmDecodeWorker", "main", decodeDigest))
	requireAbsorbed(t, a)
	// Had the tenant's pod been attributed, the two pods would disagree and
	// the lexically smaller lowDigest would win the tie, inferred.
	requireDigestFromPod(t, a.Status.Document, "VllmDecodeWorker", "main", decodeDigest, directPod, "main")
	require.NotContains(t, a.Status.Document, lowDigest)
	c.waitOnlyAIBOMs(t, ns, "DynamoGraphDeployment/vllm-disagg", "Deployment/tenant-probe")
}

// Seed §1 UID rule, envtest Grove: a PodClique deleted and re-created under
// the same name (another UID) does not adopt the stale pod, whose
// ownerReference still carries the old UID (envtest runs no garbage
// collector, like an orphaning delete).
func TestGroveRecreatedCliqueDoesNotAdoptStalePod(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const stalePod = "vllm-disagg-0-vllmdecodeworker-old01"
	const freshPod = "vllm-disagg-0-vllmdecodeworker-new02"
	objs := c.env.MustApply(t, ns, groveGraph("VllmDecodeWorker", "")+"---"+podCliqueSet+"---"+directClique+"---"+
		groveWorkerPod(stalePod, "vllm-disagg-0-vllmdecodeworker", lowDigest))
	oldClique := objs[2]
	c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", hasDigest("VllmDecodeWorker", "main", lowDigest))

	require.NoError(t, c.env.Client.Delete(context.Background(), oldClique))
	a := c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", hasContainer("VllmDecodeWorker", "main", func(c containerDigest) bool { return c.digest == "" }))
	requireAbsorbed(t, a)

	fresh := c.env.MustApply(t, ns, directClique)[0]
	require.NotEqual(t, oldClique.GetUID(), fresh.GetUID())
	c.env.MustApply(t, ns, groveWorkerPod(freshPod, "vllm-disagg-0-vllmdecodeworker", decodeDigest))
	a = c.waitAIBOM(t, ns, dgdGK, "vllm-disagg", hasDigest("VllmDecodeWorker", "main", decodeDigest))
	requireAbsorbed(t, a)
	requireDigestFromPod(t, a.Status.Document, "VllmDecodeWorker", "main", decodeDigest, freshPod, "main")
	require.NotContains(t, a.Status.Document, lowDigest, "the stale pod names the old UID")
	c.waitOnlyAIBOMs(t, ns, "DynamoGraphDeployment/vllm-disagg")
}
