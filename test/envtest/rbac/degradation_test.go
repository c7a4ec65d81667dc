package rbac_test

// Seed Design 005, Degradation, the rows about permissions ("intermediate
// kind unreadable (RBAC)"): each test runs the controller as the shipped
// ServiceAccount with one permission removed from a copy of the shipped
// ClusterRole and checks that
//   - the workload below the unreadable kind is reported as before the
//     roll-up (its own AIBOM, with its pods' digests),
//   - the miss is counted as aibom_rollup_unresolved_total{reason="forbidden"}
//     and logged once for the kind, however many workloads hit it,
//   - other workloads converge as usual (a LeaderWorkerSet chain, which needs
//     none of the removed permissions),
//   - granting the permission back converges to the full roll-up without a
//     restart: nothing was lost meanwhile.
//
// A kind the role does not grant at all, with a workload under it, is
// test/envtest/supervisor's TestRBACDenialForOneKindLeavesTheRestWorking;
// these tests remove permissions of the shipped role itself, for the kinds
// the operators' chains pass through.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const (
	dynamoImage = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"
	ollamaImage = "ollama/ollama:0.3.14"
	vllmImage   = "vllm/vllm-openai:v0.8.5"
)

// Distinct digests, so that a document naming one proves which pod it read.
var (
	decodeDigest   = harness.SHA256Hex("decode")
	frontendDigest = harness.SHA256Hex("frontend")
	leaderDigest   = harness.SHA256Hex("leader")
	ollamaADigest  = harness.SHA256Hex("ollama-a")
	ollamaBDigest  = harness.SHA256Hex("ollama-b")
	webDigest      = harness.SHA256Hex("web")
)

// The control workload of every test: LeaderWorkerSet "vllm" -> leader
// StatefulSet "vllm" -> Pod "vllm-0". None of the removed permissions is on
// its path.
var lwsChain = `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 1
    leaderTemplate:
      spec:
        containers: [{name: vllm-leader, image: "` + vllmImage + `", args: [--model, Qwen/Qwen2.5-0.5B]}]
    workerTemplate:
      spec:
        containers: [{name: vllm-leader, image: "` + vllmImage + `"}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm
  ownerReferences: [{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: vllm, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  serviceName: vllm
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec: {containers: [{name: vllm-leader, image: "` + vllmImage + `"}]}
---` + harness.PodYAML("vllm-0", "apps/v1", "StatefulSet", "vllm", "vllm-leader", vllmImage, leaderDigest)

// requireControlConverges checks the control workload: the LeaderWorkerSet
// absorbs its StatefulSet and reads the leader pod's digest.
func requireControlConverges(t *testing.T, ns string) {
	t.Helper()
	waitAIBOM(t, ns, lwsGK, "vllm", eventually, all(absorbs("StatefulSet.apps/vllm"), hasDigest("", "vllm-leader", leaderDigest)))
	waitOnlyAIBOMs(t, ns, eventually, "LeaderWorkerSet/vllm")
}

// The Grove provider's chain, DynamoGraphDeployment "vllm-disagg" ->
// PodCliqueSet -> PodClique -> worker Pod, and two StatefulSets controlled
// by the PodClique, each with its pod. Grove kinds are walk-only: readable,
// the graph absorbs both StatefulSets and reads the worker's digest.
var groveChain = `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: vllm-disagg}
spec:
  backendFramework: vllm
  components:
  - name: VllmDecodeWorker
    type: decode
    replicas: 1
    podTemplate:
      spec:
        containers: [{name: main, image: ` + dynamoImage + `, command: [python3, -m, dynamo.vllm], args: [--model, Qwen/Qwen3-0.6B]}]
---
apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: vllm-disagg
  ownerReferences: [{apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  template:
    cliques: [{name: vllmdecodeworker, spec: {roleName: vllmdecodeworker, replicas: 1, podSpec: {containers: [{name: main, image: ` + dynamoImage + `}]}}}]
---
apiVersion: grove.io/v1alpha1
kind: PodClique
metadata:
  name: vllm-disagg-0-vllmdecodeworker
  ownerReferences: [{apiVersion: grove.io/v1alpha1, kind: PodCliqueSet, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  roleName: vllmdecodeworker
  replicas: 1
  podSpec:
    containers: [{name: main, image: ` + dynamoImage + `}]
---` + harness.PodYAML("vllm-disagg-0-vllmdecodeworker-x7k2p", "grove.io/v1alpha1", "PodClique", "vllm-disagg-0-vllmdecodeworker", "main", dynamoImage, decodeDigest) +
	"---" + cliqueStatefulSet("ollama-a", ollamaADigest) + "---" + cliqueStatefulSet("ollama-b", ollamaBDigest)

func cliqueStatefulSet(name, d string) string {
	return `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: ` + name + `
  ownerReferences: [{apiVersion: grove.io/v1alpha1, kind: PodClique, name: vllm-disagg-0-vllmdecodeworker, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  serviceName: ` + name + `
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec: {containers: [{name: ollama, image: "` + ollamaImage + `", args: [serve]}]}
---` + harness.PodYAML(name+"-0", "apps/v1", "StatefulSet", name, "ollama", ollamaImage, d)
}

// Grove kinds forbidden: the StatefulSets under the PodClique are reported
// on their own, the graph without them; granting grove.io back rolls them
// up into the graph.
func TestGroveKindsForbidden(t *testing.T) {
	const kind = "PodClique.grove.io"
	since, missesBefore := logs.mark(), forbiddenMisses(kind)
	errsBefore := map[string]float64{}
	for _, k := range []string{"PodCliqueSet.grove.io", kind} {
		errsBefore[k] = watchErrors(k)
	}
	d := deny(t, "grove.io", "podcliquesets", "podcliques", "podcliquescalinggroups")
	for k, before := range errsBefore {
		waitWatchErrors(t, k, before)
	}
	ns, control := newNamespace(t), newNamespace(t)
	env.MustApply(t, ns, groveChain)
	env.MustApply(t, control, lwsChain)

	waitAIBOM(t, ns, statefulSetGK, "ollama-a", eventually, all(absorbs(), hasDigest("", "ollama", ollamaADigest)))
	waitAIBOM(t, ns, statefulSetGK, "ollama-b", eventually, all(absorbs(), hasDigest("", "ollama", ollamaBDigest)))
	// The graph is reported too; its worker pod is out of reach behind the
	// unreadable Grove kinds, so its digest is unresolved.
	waitAIBOM(t, ns, dgdGK, "vllm-disagg", eventually, all(absorbs(), hasDigest("VllmDecodeWorker", "main", "")))
	waitOnlyAIBOMs(t, ns, eventually, "DynamoGraphDeployment/vllm-disagg", "StatefulSet/ollama-a", "StatefulSet/ollama-b")
	require.GreaterOrEqual(t, forbiddenMisses(kind)-missesBefore, 2.0, "each StatefulSet's walk stopped at the forbidden PodClique")
	require.Equal(t, 1, walkMissLogs(since, kind, "forbidden"), "one log line for the kind")
	requireControlConverges(t, control)

	d.restore(t)
	waitAIBOM(t, ns, dgdGK, "vllm-disagg", recovery,
		all(absorbs("StatefulSet.apps/ollama-a", "StatefulSet.apps/ollama-b"), hasDigest("VllmDecodeWorker", "main", decodeDigest)))
	waitOnlyAIBOMs(t, ns, eventually, "DynamoGraphDeployment/vllm-disagg")
}

// The component provider's chain for a graph of two components: per
// component a DynamoComponentDeployment, its Deployment, ReplicaSet and
// running pod.
func componentChain() string {
	out := `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: vllm-disagg
  annotations: {nvidia.com/enable-grove: "false"}
spec:
  backendFramework: vllm
  components:
  - name: Frontend
    type: frontend
    replicas: 1
    podTemplate:
      spec:
        containers: [{name: frontend, image: ` + dynamoImage + `, command: [python3, -m, dynamo.frontend]}]
  - name: VllmDecodeWorker
    type: decode
    replicas: 1
    podTemplate:
      spec:
        containers: [{name: main, image: ` + dynamoImage + `, command: [python3, -m, dynamo.vllm], args: [--model, Qwen/Qwen3-0.6B]}]
`
	// The containers have distinct names: the graph's document matches pods
	// to its containers by name and image, and both run the same image.
	for _, c := range []struct{ component, typ, container, command, d string }{
		{"Frontend", "frontend", "frontend", "[python3, -m, dynamo.frontend]", frontendDigest},
		{"VllmDecodeWorker", "decode", "main", "[python3, -m, dynamo.vllm]", decodeDigest},
	} {
		name := "vllm-disagg-" + lower(c.component)
		rs := name + "-7c9d8b6f4d"
		out += `---
apiVersion: nvidia.com/v1beta1
kind: DynamoComponentDeployment
metadata:
  name: ` + name + `
  ownerReferences: [{apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  backendFramework: vllm
  name: ` + c.component + `
  type: ` + c.typ + `
  replicas: 1
  podTemplate:
    spec:
      containers: [{name: ` + c.container + `, image: ` + dynamoImage + `, command: ` + c.command + `}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  ownerReferences: [{apiVersion: nvidia.com/v1beta1, kind: DynamoComponentDeployment, name: ` + name + `, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec: {containers: [{name: ` + c.container + `, image: ` + dynamoImage + `, command: ` + c.command + `}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: ` + rs + `
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: ` + name + `, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec: {containers: [{name: ` + c.container + `, image: ` + dynamoImage + `}]}
---` + harness.PodYAML(rs+"-x7k2p", "apps/v1", "ReplicaSet", rs, c.container, dynamoImage, c.d)
	}
	return out
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// absorbedAll is what the graph absorbs when everything is readable.
var absorbedAll = []string{
	"Deployment.apps/vllm-disagg-frontend", "Deployment.apps/vllm-disagg-vllmdecodeworker",
	"DynamoComponentDeployment.nvidia.com/vllm-disagg-frontend", "DynamoComponentDeployment.nvidia.com/vllm-disagg-vllmdecodeworker",
}

// DynamoComponentDeployments forbidden: each component's Deployment is
// reported on its own with its pod's digest, the graph without them;
// granting the DCDs back rolls everything up into the graph.
func TestDynamoComponentDeploymentsForbidden(t *testing.T) {
	const kind = "DynamoComponentDeployment.nvidia.com"
	since, missesBefore, errsBefore := logs.mark(), forbiddenMisses(kind), watchErrors(kind)
	d := deny(t, "nvidia.com", "dynamocomponentdeployments")
	waitWatchErrors(t, kind, errsBefore)
	ns, control := newNamespace(t), newNamespace(t)
	env.MustApply(t, ns, componentChain())
	env.MustApply(t, control, lwsChain)

	waitAIBOM(t, ns, deploymentGK, "vllm-disagg-frontend", eventually, all(absorbs(), hasDigest("", "frontend", frontendDigest)))
	waitAIBOM(t, ns, deploymentGK, "vllm-disagg-vllmdecodeworker", eventually, all(absorbs(), hasDigest("", "main", decodeDigest)))
	waitAIBOM(t, ns, dgdGK, "vllm-disagg", eventually, all(absorbs(), hasDigest("VllmDecodeWorker", "main", "")))
	// No AIBOM for the DCDs themselves: the controller cannot read them.
	waitOnlyAIBOMs(t, ns, eventually, "DynamoGraphDeployment/vllm-disagg",
		"Deployment/vllm-disagg-frontend", "Deployment/vllm-disagg-vllmdecodeworker")
	require.GreaterOrEqual(t, forbiddenMisses(kind)-missesBefore, 2.0, "each Deployment's walk stopped at its forbidden DCD")
	require.Equal(t, 1, walkMissLogs(since, kind, "forbidden"), "one log line for the kind")
	requireControlConverges(t, control)

	d.restore(t)
	waitAIBOM(t, ns, dgdGK, "vllm-disagg", recovery,
		all(absorbs(absorbedAll...), hasDigest("VllmDecodeWorker", "main", decodeDigest), hasDigest("Frontend", "frontend", frontendDigest)))
	waitOnlyAIBOMs(t, ns, eventually, "DynamoGraphDeployment/vllm-disagg")
}

const webChain = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: vllm, image: "` + vllmImage + `", args: [--model, Qwen/Qwen2.5-0.5B]}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-5f6d7c8b9
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: web, pod-template-hash: 5f6d7c8b9}}
  template:
    metadata: {labels: {app: web, pod-template-hash: 5f6d7c8b9}}
    spec: {containers: [{name: vllm, image: "` + vllmImage + `"}]}
---`

// ReplicaSets forbidden: ReplicaSets sit between Deployments and their pods,
// never between two tracked workloads, so the roll-up is unchanged (the
// graph still absorbs its components) and every workload keeps its AIBOM;
// what is lost meanwhile is the running digest of pods behind a ReplicaSet
// (unresolved, not guessed). Granting ReplicaSets back resolves them.
func TestReplicaSetsForbidden(t *testing.T) {
	const kind = "ReplicaSet.apps"
	errsBefore := watchErrors(kind)
	unreadableBefore := harness.MetricValue("aibom_closure_unreadable_total", map[string]string{"kind": kind})
	d := deny(t, "apps", "replicasets")
	waitWatchErrors(t, kind, errsBefore)
	ns, control := newNamespace(t), newNamespace(t)
	env.MustApply(t, ns, componentChain()+"---"+webChain+harness.PodYAML("web-5f6d7c8b9-qq2xw", "apps/v1", "ReplicaSet", "web-5f6d7c8b9", "vllm", vllmImage, webDigest))
	env.MustApply(t, control, lwsChain)

	// The control's pod was created after the others and the pod informer
	// delivers in order: once its digest is in, every pod is in the cache.
	requireControlConverges(t, control)
	waitAIBOM(t, ns, dgdGK, "vllm-disagg", eventually,
		all(absorbs(absorbedAll...), hasDigest("VllmDecodeWorker", "main", ""), hasDigest("Frontend", "frontend", "")))
	waitAIBOM(t, ns, deploymentGK, "web", eventually, all(absorbs(), hasDigest("", "vllm", "")))
	waitOnlyAIBOMs(t, ns, eventually, "DynamoGraphDeployment/vllm-disagg", "Deployment/web")
	// The missing digests are explained: every root whose closure needed
	// the ReplicaSets counted it.
	require.GreaterOrEqual(t, harness.MetricValue("aibom_closure_unreadable_total", map[string]string{"kind": kind})-unreadableBefore, 2.0,
		"the closures that could not read ReplicaSets are counted")

	d.restore(t)
	waitAIBOM(t, ns, dgdGK, "vllm-disagg", recovery,
		all(absorbs(absorbedAll...), hasDigest("VllmDecodeWorker", "main", decodeDigest), hasDigest("Frontend", "frontend", frontendDigest)))
	waitAIBOM(t, ns, deploymentGK, "web", recovery, hasDigest("", "vllm", webDigest))
	waitOnlyAIBOMs(t, ns, eventually, "DynamoGraphDeployment/vllm-disagg", "Deployment/web")
}
