package operators

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const ollamaImage = "ollama/ollama:0.3.14"

// ownedStatefulSet is a StatefulSet "ollama" controlled by ownerRef (a flow
// map) with its running pod.
func ownedStatefulSet(ownerRef string) string {
	return `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: ollama
  ownerReferences: [` + ownerRef + `]
spec:
  replicas: 1
  serviceName: ollama
  selector: {matchLabels: {app: ollama}}
  template:
    metadata: {labels: {app: ollama}}
    spec: {containers: [{name: ollama, image: "` + ollamaImage + `", args: [serve]}]}
---` + podYAML("ollama-0", "apps/v1", "StatefulSet", "ollama", `{app: ollama}`, ctr{"ollama", ollamaImage, workerDigest})
}

// Seed Testing and degradation table: a StatefulSet controlled by an owner
// the controller cannot pass is still reported, with its pod's digest:
// a kind no adapter declares (an operator the controller does not know), and
// a Grove kind whose CRD is absent (the alpha control plane serves no
// grove.io), which the walk treats as an untracked owner.
func TestStatefulSetWithUntrackedOwnerIsReported(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     **cluster
		owner string
	}{
		{"undeclared-kind", &beta, `{apiVersion: ray.io/v1, kind: RayService, name: ollama, uid: 6d1f0b7e-3a4c-4e8b-9f2a-0c1d2e3f4a5b, controller: true, blockOwnerDeletion: true}`},
		{"grove-crd-absent", &alpha, `{apiVersion: grove.io/v1alpha1, kind: PodClique, name: vllm-disagg-0-ollama, uid: 2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091, controller: true, blockOwnerDeletion: true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *tc.c
			ns := c.newNamespace(t)
			c.env.MustApply(t, ns, ownedStatefulSet(tc.owner))
			a := c.waitAIBOM(t, ns, statefulSetGK, "ollama", hasDigest("", "ollama", workerDigest))
			requireAbsorbed(t, a)
			requireDigestFromPod(t, a.Status.Document, "", "ollama", workerDigest, "ollama-0", "ollama")
			require.Equal(t, "ollama", a.Status.Summary.Runtime)
			c.waitOnlyAIBOMs(t, ns, "StatefulSet/ollama")
		})
	}
	require.Positive(t, harness.MetricValue("aibom_rollup_unresolved_total", map[string]string{"kind": "PodClique.grove.io", "reason": "no_match"}),
		"the absent Grove kind is counted as a miss")
}

// A NIMCache's model-puller Job: NIMCache is a CRD the cluster serves but no
// adapter declares, so the Job it controls is a root with its own AIBOM and
// its pod's digest.
func TestJobControlledByNIMCacheIsReported(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const puller = "nvcr.io/nim/meta/llama-3.2-1b-instruct:1.12.0"
	c.env.MustApply(t, ns, `
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMCache
metadata: {name: meta-llama-3-2-1b-instruct}
spec:
  source:
    ngc: {modelPuller: "`+puller+`", pullSecret: ngc-secret, authSecret: ngc-api-secret, model: {engine: tensorrt_llm, tensorParallelism: "1"}}
  storage:
    pvc: {create: true, storageClass: standard, size: 50Gi, volumeAccessMode: ReadWriteOnce}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: meta-llama-3-2-1b-instruct-job
  ownerReferences: [{apiVersion: apps.nvidia.com/v1alpha1, kind: NIMCache, name: meta-llama-3-2-1b-instruct, controller: true, blockOwnerDeletion: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: nim-cache-ctr, image: "`+puller+`", command: [download-to-cache]}]
---`+podYAML("meta-llama-3-2-1b-instruct-job-8wz4m", "batch/v1", "Job", "meta-llama-3-2-1b-instruct-job",
		`{job-name: meta-llama-3-2-1b-instruct-job}`, ctr{"nim-cache-ctr", puller, nimDigest}))
	jobGK := schema.GroupKind{Group: "batch", Kind: "Job"}
	a := c.waitAIBOM(t, ns, jobGK, "meta-llama-3-2-1b-instruct-job", hasDigest("", "nim-cache-ctr", nimDigest))
	requireAbsorbed(t, a)
	requireDigestFromPod(t, a.Status.Document, "", "nim-cache-ctr", nimDigest, "meta-llama-3-2-1b-instruct-job-8wz4m", "nim-cache-ctr")
	c.waitOnlyAIBOMs(t, ns, "Job/meta-llama-3-2-1b-instruct-job")
}
