package envtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const runningDigest = "4f0a3c2b1e8d7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a"

// vllmChain is a Deployment with the ReplicaSet and running Pod that
// kube-controller-manager and a kubelet would produce.
const vllmChain = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama}
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: llama-5d4c
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: llama, controller: true}]
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec: {containers: [{name: vllm, image: vllm/vllm-openai:v0.6.3}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: llama-5d4c-x1
  labels: {app: llama}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: llama-5d4c, controller: true}]
spec: {containers: [{name: vllm, image: vllm/vllm-openai:v0.6.3}]}
status:
  containerStatuses:
    - name: vllm
      image: docker.io/vllm/vllm-openai:v0.6.3
      imageID: docker.io/vllm/vllm-openai@sha256:` + runningDigest + `
      ready: true
      restartCount: 0
      state: {running: {}}
`

func TestDeploymentGetsAIBOMWithDigestFromPodStatus(t *testing.T) {
	ns := newNamespace(t, true)
	env.MustApply(t, ns, vllmChain)
	a := waitAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "llama"), func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, runningDigest)
	})
	require.Equal(t, "Deployment", a.Spec.Subject.Kind)
	require.Equal(t, "llama", a.Spec.Subject.Name)
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	require.Equal(t, "meta-llama/Llama-3.1-8B-Instruct", a.Status.Summary.Model)
	require.Empty(t, a.Status.Absorbed, "a ReplicaSet is walk-only and never listed")
	require.Len(t, a.OwnerReferences, 1)
	require.Equal(t, "llama", a.OwnerReferences[0].Name)
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))

	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(a.Status.Document), &doc))
	require.Equal(t, "1.6", doc["specVersion"])
	var digestSource string
	for _, c := range doc["components"].([]any) {
		comp := c.(map[string]any)
		if comp["type"] != "container" {
			continue
		}
		require.Equal(t, runningDigest, comp["hashes"].([]any)[0].(map[string]any)["content"])
		for _, p := range comp["properties"].([]any) {
			if p.(map[string]any)["name"] == "aibom.digest.source" {
				digestSource = p.(map[string]any)["value"].(string)
			}
		}
	}
	require.Equal(t, "pod_status", digestSource)
	require.Equal(t, a.Status.DocumentSHA256, harness.SHA256Hex(a.Status.Document))
}

func TestNamespaceNotOptedInGetsNoAIBOM(t *testing.T) {
	off := newNamespace(t, false)
	on := newNamespace(t, true)
	notOptedIn := outcomeCount("Deployment.apps", reconcile.OutcomeNotOptedIn)
	env.MustApply(t, off, vllmChain)
	env.MustApply(t, on, vllmChain) // created after: once it has its AIBOM, the other's events were seen too
	waitAIBOM(t, harness.AIBOMKey(on, deploymentGK, "llama"), nil)
	requireNoAIBOMFor(t, harness.AIBOMKey(off, deploymentGK, "llama"))
	// Its events stopped at the enqueue filter: not even a reconcile.
	require.Equal(t, notOptedIn, outcomeCount("Deployment.apps", reconcile.OutcomeNotOptedIn))
}

func TestOptingOutDeletesTheNamespacesAIBOMs(t *testing.T) {
	ns := newNamespace(t, true)
	env.MustApply(t, ns, vllmChain)
	key := harness.AIBOMKey(ns, deploymentGK, "llama")
	waitAIBOM(t, key, nil)

	n := &corev1.Namespace{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, n))
	n.Labels[graph.OptInLabel] = "false"
	require.NoError(t, env.Client.Update(context.Background(), n))
	waitNoAIBOM(t, key)

	// Opting back in brings it back.
	n.Labels[graph.OptInLabel] = "true"
	require.NoError(t, env.Client.Update(context.Background(), n))
	waitAIBOM(t, key, nil)
}

func TestDeletingTheWorkloadRemovesItsAIBOM(t *testing.T) {
	ns := newNamespace(t, true)
	objs := env.MustApply(t, ns, vllmChain)
	key := harness.AIBOMKey(ns, deploymentGK, "llama")
	waitAIBOM(t, key, nil)
	// envtest runs no garbage collector: the controller itself removes it.
	require.NoError(t, env.Client.Delete(context.Background(), objs[0]))
	waitNoAIBOM(t, key)
}

func TestUnchangedInputsIssueNoRequests(t *testing.T) {
	ns := newNamespace(t, true)
	objs := env.MustApply(t, ns, vllmChain)
	key := harness.AIBOMKey(ns, deploymentGK, "llama")
	first := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, runningDigest) })
	waitQuiet(t)

	mark := len(controller.Requests.Log())
	unchanged := outcomeCount("Deployment.apps", reconcile.OutcomeUnchanged)
	// An annotation that no scraper reads triggers a reconcile whose inputs
	// did not change: the peer rewrites status here; we must not.
	deploy := objs[0].DeepCopy()
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(deploy), deploy))
	deploy.SetAnnotations(map[string]string{"team": "inference"})
	require.NoError(t, env.Client.Update(context.Background(), deploy))
	require.Eventually(t, func() bool { return outcomeCount("Deployment.apps", reconcile.OutcomeUnchanged) > unchanged }, eventually, tick)
	waitQuiet(t)

	var issued []string
	for _, r := range requestsSince(t, mark, ns) {
		issued = append(issued, r.Key+" "+r.Path)
	}
	require.Empty(t, issued, "a reconcile with unchanged inputs must issue no request at all")
	after := &v1alpha1.AIBOM{}
	require.NoError(t, env.Client.Get(context.Background(), key, after))
	require.Equal(t, first.ResourceVersion, after.ResourceVersion)
}

// requestsSince returns the controller's requests after the mark, less the
// Events of other namespaces: the recorder retries a series' PATCH about
// 10 s after it raced the Event's creation, so another test's Event may
// still be on its way. Every other request counts, whatever its namespace.
func requestsSince(t *testing.T, mark int, ns string) []harness.Request {
	t.Helper()
	var out []harness.Request
	for _, r := range controller.Requests.Log()[mark:] {
		if strings.HasSuffix(r.Key, " events") && !strings.Contains(r.Path, "/namespaces/"+ns+"/") {
			t.Logf("not counted: %s %s (another namespace's Event)", r.Key, r.Path)
			continue
		}
		out = append(out, r)
	}
	return out
}

func TestNewRootCostsAtMostTwoWrites(t *testing.T) {
	waitQuiet(t)
	ns := newNamespace(t, true)
	mark := len(controller.Requests.Log())
	env.MustApply(t, ns, vllmChain)
	waitAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "llama"), func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, runningDigest) })
	waitQuiet(t)
	writes := map[string]int{}
	total := 0
	for _, r := range requestsSince(t, mark, ns) {
		if r.Write() {
			writes[r.Key]++
			total++
		}
	}
	// Create, then the status, and one status update when the pod's digest
	// arrives after the first reconcile (the manifest creates the pod and
	// then its status, as a kubelet would).
	require.LessOrEqual(t, total, 3, "writes: %v", writes)
	require.Equal(t, 1, writes["POST aiboms"], "writes: %v", writes)
}

func TestDocumentsAreByteIdenticalAcrossRuns(t *testing.T) {
	ns := newNamespace(t, true)
	env.MustApply(t, ns, vllmChain)
	key := harness.AIBOMKey(ns, deploymentGK, "llama")
	first := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, runningDigest) })

	// A second controller process, with a cold cache, builds the same bytes.
	require.NoError(t, env.Client.Delete(context.Background(), first))
	second := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return a.UID != first.UID })
	require.Equal(t, first.Status.Document, second.Status.Document)
	require.Equal(t, first.Status.InputHash, second.Status.InputHash)
	require.NoError(t, document.ValidateSchema([]byte(second.Status.Document)))
}

func TestJobGetsDigestFromItsPod(t *testing.T) {
	ns := newNamespace(t, true)
	env.MustApply(t, ns, `
apiVersion: batch/v1
kind: Job
metadata: {name: eval}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: eval, image: "ghcr.io/huggingface/text-generation-inference:2.4.0", args: ["--model-id", "mistralai/Mistral-7B-Instruct-v0.3"]}]
`)
	job := &unstructured.Unstructured{}
	job.SetAPIVersion("batch/v1")
	job.SetKind("Job")
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "eval"}, job))
	env.MustApply(t, ns, `
apiVersion: v1
kind: Pod
metadata:
  name: eval-abcde
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: eval, controller: true}]
spec: {restartPolicy: Never, containers: [{name: eval, image: "ghcr.io/huggingface/text-generation-inference:2.4.0"}]}
status:
  containerStatuses:
    - {name: eval, image: "ghcr.io/huggingface/text-generation-inference:2.4.0", imageID: "ghcr.io/huggingface/text-generation-inference@sha256:`+runningDigest+`", ready: true, restartCount: 0, state: {running: {}}}
`)
	a := waitAIBOM(t, harness.AIBOMKey(ns, jobGK, "eval"), func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, runningDigest) })
	require.Equal(t, "tgi", a.Status.Summary.Runtime)
	require.Equal(t, "mistralai/Mistral-7B-Instruct-v0.3", a.Status.Summary.Model)
}

func TestOddSpecsYieldADocumentAndNoSecret(t *testing.T) {
	ns := newNamespace(t, true)
	const token = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	args := []string{"--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", "模型/名前-v1", "--api-key", token, "--download-dir=https://user:s3cr3tpass@models.example.com/x"}
	for i := 0; i < 5000; i++ {
		args = append(args, "--flag-"+strings.Repeat("x", 20))
	}
	argsJSON, _ := json.Marshal(args)
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: "odd"}
spec:
  serviceName: odd
  selector: {matchLabels: {app: odd}}
  template:
    metadata: {labels: {app: odd}, annotations: {"model.aibom.dev/base": "ünïcødé/base-model"}}
    spec:
      containers:
        - name: main
          image: "lmsysorg/sglang:v0.4.0"
          args: `+string(argsJSON)+`
          env:
            - {name: HF_TOKEN, value: "`+token+`"}
            - {name: MODEL_NAME, valueFrom: {configMapKeyRef: {name: cfg, key: model}}}
`)
	a := waitAIBOM(t, harness.AIBOMKey(ns, statefulSetGK, "odd"), nil)
	ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	require.Equal(t, "True", string(ready.Status), ready.Message)
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
	require.NotContains(t, a.Status.Document, token)
	require.NotContains(t, a.Status.Document, "s3cr3tpass")
	require.Contains(t, a.Status.Document, "aibom.redaction.")
	require.Contains(t, a.Status.Document, "模型/名前-v1")
	require.Contains(t, a.Status.Document, "ünïcødé/base-model")
	require.Contains(t, a.Status.Document, "Qwen/Qwen2.5-7B-Instruct")
}

// waitQuiet waits until the controller has made no request for a while, so
// that a test measures only what it triggers.
func waitQuiet(t *testing.T) {
	t.Helper()
	last := controller.Requests.Snapshot()
	stable := 0
	require.Eventually(t, func() bool {
		now := controller.Requests.Snapshot()
		if len(controller.Requests.Since(last)) == 0 {
			stable++
		} else {
			stable = 0
		}
		last = now
		return stable >= 10
	}, eventually, 100*time.Millisecond)
}

// outcomeCount reads aibom_workload_reconcile_outcomes_total{kind,outcome}.
func outcomeCount(kind, outcome string) float64 {
	return harness.MetricValue("aibom_workload_reconcile_outcomes_total", map[string]string{"kind": kind, "outcome": outcome})
}
