package operators

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/adapters/nim"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const (
	nimImage   = "nvcr.io/nim/meta/llama-3.2-1b-instruct:1.12.0"
	nim405Name = "llama-3-1-405b"
	nim405Img  = "nvcr.io/nim/meta/llama-3.1-405b-instruct:1.8.4"
)

// nimLlama is a single-node NIMService (operators.md §3.1).
const nimLlama = `
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: meta-llama-3-2-1b-instruct}
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.2-1b-instruct
    tag: "1.12.0"
    pullPolicy: IfNotPresent
    pullSecrets: [ngc-secret]
  authSecret: ngc-api-secret
  storage:
    nimCache: {name: meta-llama-3-2-1b-instruct, profile: ''}
  replicas: 1
  resources:
    limits: {nvidia.com/gpu: 1}
  env:
  - {name: NIM_LOG_LEVEL, value: INFO}
  expose:
    service: {type: ClusterIP, port: 8000}
`

// Seed Testing, NIM: NIMService -> Deployment "<name>" (container
// "<name>-ctr") -> ReplicaSet -> Pod. One document, the NIMService's,
// absorbing the Deployment, with the pod's digest and runtime nim.
func TestNIMServiceAbsorbsDeployment(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const name = "meta-llama-3-2-1b-instruct"
	const pod = name + "-6f8c9d7b5-l2v9k"
	labels := `{app: ` + name + `, app.kubernetes.io/name: ` + name + `, app.kubernetes.io/instance: ` + name + `, app.kubernetes.io/part-of: nim-service, app.kubernetes.io/managed-by: k8s-nim-operator}`
	c.env.MustApply(t, ns, nimLlama+`---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: `+name+`
  labels: `+labels+`
  ownerReferences: [{apiVersion: apps.nvidia.com/v1alpha1, kind: NIMService, name: `+name+`, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  selector: {matchLabels: {app: `+name+`}}
  template:
    metadata: {labels: `+labels+`}
    spec: {containers: [{name: `+name+`-ctr, image: "`+nimImage+`"}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: `+name+`-6f8c9d7b5
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: `+name+`, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: `+name+`, pod-template-hash: 6f8c9d7b5}}
  template:
    metadata: {labels: {app: `+name+`, pod-template-hash: 6f8c9d7b5}}
    spec: {containers: [{name: `+name+`-ctr, image: "`+nimImage+`"}]}
---`+podYAML(pod, "apps/v1", "ReplicaSet", name+"-6f8c9d7b5", labels, ctr{name + "-ctr", nimImage, nimDigest}))

	a := c.waitAIBOM(t, ns, nimGK, name, all(absorbedLen(1), hasDigest("", name+"-ctr", nimDigest)))
	requireAbsorbed(t, a, "Deployment.apps/"+name)
	requireDigestFromPod(t, a.Status.Document, "", name+"-ctr", nimDigest, pod, name+"-ctr")
	require.Equal(t, "nim", a.Status.Summary.Runtime)
	c.waitOnlyAIBOMs(t, ns, "NIMService/"+name)
}

// Seed Testing, NIM multi-node: NIMService -> LeaderWorkerSet "<name>-lws"
// -> leader StatefulSet -> leader Pod (container nim-leader) -> worker
// StatefulSet (controlled by the leader Pod) -> worker Pod (container
// nim-worker). One document with the pods' digest, runtime nim.
func TestNIMServiceMultiNodeAbsorbsLeaderWorkerSet(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const lws = nim405Name + "-lws"
	objs := c.env.MustApply(t, ns, `
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: `+nim405Name+`}
spec:
  image: {repository: nvcr.io/nim/meta/llama-3.1-405b-instruct, tag: "1.8.4"}
  authSecret: ngc-api-secret
  multiNode:
    backendType: lws
    parallelism: {pipeline: 2, tensor: 8}
    mpi: {mpiStartTimeout: 6000}
  storage:
    nimCache: {name: `+nim405Name+`, profile: tensorrt_llm-h100-fp8-tp8-pp2-throughput}
  resources:
    limits: {nvidia.com/gpu: 8}
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: `+lws+`
  ownerReferences: [{apiVersion: apps.nvidia.com/v1alpha1, kind: NIMService, name: `+nim405Name+`, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    restartPolicy: RecreateGroupOnPodRestart
    leaderTemplate:
      metadata: {labels: {app: `+lws+`, nim-llm-role: leader}}
      spec: {containers: [{name: nim-leader, image: "`+nim405Img+`"}]}
    workerTemplate:
      spec: {containers: [{name: nim-worker, image: "`+nim405Img+`"}]}
  networkConfig: {subdomainPolicy: Shared}
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
    spec: {containers: [{name: nim-leader, image: "`+nim405Img+`"}]}
---`+podYAML(lws+"-0", "apps/v1", "StatefulSet", lws,
		`{app: `+lws+`, nim-llm-role: leader, leaderworkerset.sigs.k8s.io/name: `+lws+`, leaderworkerset.sigs.k8s.io/group-index: "0", leaderworkerset.sigs.k8s.io/worker-index: "0"}`,
		ctr{"nim-leader", nim405Img, ""})+`
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
    spec: {containers: [{name: nim-worker, image: "`+nim405Img+`"}]}
---`+podYAML(lws+"-0-1", "apps/v1", "StatefulSet", lws+"-0",
		`{leaderworkerset.sigs.k8s.io/name: `+lws+`, leaderworkerset.sigs.k8s.io/group-index: "0", leaderworkerset.sigs.k8s.io/worker-index: "1"}`,
		ctr{"nim-worker", nim405Img, nimDigest}))

	want := []string{"LeaderWorkerSet.leaderworkerset.x-k8s.io/" + lws, "StatefulSet.apps/" + lws, "StatefulSet.apps/" + lws + "-0"}
	main := nim405Name + "-ctr"
	// The worker pulled first: its pod, two hops below the leader pod, gives
	// the digest (its container is nim-worker).
	a := c.waitAIBOM(t, ns, nimGK, nim405Name, all(absorbedLen(len(want)), hasDigest("", main, nimDigest)))
	requireAbsorbed(t, a, want...)
	requireDigestFromPod(t, a.Status.Document, "", main, nimDigest, lws+"-0-1", "nim-worker")
	require.Equal(t, "nim", a.Status.Summary.Runtime)

	setPodDigest(t, c, objs[3], "nim-leader", nim405Img, nimDigest)
	a = c.waitAIBOM(t, ns, nimGK, nim405Name, citesPod("", main, lws+"-0", "nim-leader"))
	requireAbsorbed(t, a, want...)
	requireDigestFromPod(t, a.Status.Document, "", main, nimDigest, lws+"-0", "nim-leader")
	c.waitOnlyAIBOMs(t, ns, "NIMService/"+nim405Name)
}

// Seed Testing, byte identity: a root with no descendants (a NIMService the
// operator has not materialised yet) gets exactly the document built from
// its scrape alone, without any aibom.rollup.owned property, and a second
// reconcile (a cold rebuild after its AIBOM is deleted) writes the same
// bytes.
func TestNIMServiceWithoutDescendantsIsByteIdentical(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	svc := c.env.MustApply(t, ns, nimLlama)[0]
	const name = "meta-llama-3-2-1b-instruct"
	first := c.waitAIBOM(t, ns, nimGK, name, nil)
	requireAbsorbed(t, first)

	// The NIMCache it names does not exist: the scrape sees it not found,
	// and the document lists the reference as such.
	noCache := &conformance.ObjectResolver{Kinds: nim.New().Kinds(), Namespace: ns}
	findings, err := nim.New().Scrape(adapter.WithResolver(context.Background(), noCache), c.get(t, svc))
	require.NoError(t, err)
	want, err := document.Build(document.Input{
		Subject:  document.Subject{APIVersion: "apps.nvidia.com/v1alpha1", Group: "apps.nvidia.com", Kind: "NIMService", Namespace: ns, Name: name, UID: string(svc.GetUID())},
		Tool:     harness.ControllerTool,
		Findings: findings,
		Digests:  digest.Resolve(findings.Containers, nil),
		MaxBytes: 512 * 1024,
		Created:  svc.GetCreationTimestamp().Time,
		References: []document.Reference{{Group: nim.Group, Kind: "NIMCache", Namespace: ns, Name: name,
			Locator: "spec.storage.nimCache.name", Unresolved: adapter.ReasonNotFound}},
	})
	require.NoError(t, err)
	require.Equal(t, string(want.JSON), first.Status.Document)
	require.NotContains(t, first.Status.Document, "aibom.rollup")

	require.NoError(t, c.env.Client.Delete(context.Background(), first))
	second := c.waitAIBOM(t, ns, nimGK, name, func(a *v1alpha1.AIBOM) bool { return a.UID != first.UID })
	require.Equal(t, first.Status.Document, second.Status.Document)
	require.Equal(t, first.Status.DocumentSHA256, second.Status.DocumentSHA256)
	require.Equal(t, first.Status.InputHash, second.Status.InputHash)
	requireAbsorbed(t, second)
}
