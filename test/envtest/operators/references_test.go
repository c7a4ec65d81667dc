package operators

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	isvcGK       = schema.GroupKind{Group: "serving.kserve.io", Kind: "InferenceService"}
	rayServiceGK = schema.GroupKind{Group: "ray.io", Kind: "RayService"}
	rayClusterGK = schema.GroupKind{Group: "ray.io", Kind: "RayCluster"}
	trainJobGK   = schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}
	jobGK        = schema.GroupKind{Group: "batch", Kind: "Job"}

	kserveDigest = digestOf("kserve")
	rayDigest    = digestOf("ray")
	trainDigest  = digestOf("train")
)

// docHas is a waitAIBOM condition: the document holds every string.
func docHas(subs ...string) func(*v1alpha1.AIBOM) bool {
	return func(a *v1alpha1.AIBOM) bool {
		for _, s := range subs {
			if !strings.Contains(a.Status.Document, s) {
				return false
			}
		}
		return true
	}
}

// statusWrites counts the changes of one AIBOM the API server reports
// from now on; stop returns the count.
func (c *cluster) statusWrites(t *testing.T, key client.ObjectKey) (stop func() int) {
	t.Helper()
	wc, err := client.NewWithWatch(c.env.Config, client.Options{Scheme: harness.Scheme()})
	require.NoError(t, err)
	w, err := wc.Watch(context.Background(), &v1alpha1.AIBOMList{}, client.InNamespace(key.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", key.Name)})
	require.NoError(t, err)
	n := make(chan int, 1)
	go func() {
		count, first := 0, true
		for ev := range w.ResultChan() {
			if first && ev.Type == watch.Added {
				first = false // the current state, not a write
				continue
			}
			first = false
			if ev.Type == watch.Modified {
				count++
			}
		}
		n <- count
	}()
	return func() int {
		w.Stop()
		return <-n
	}
}

// Issue 14, Done when: an InferenceService whose model names a
// ServingRuntime. The runtime's image is the predictor's, and the Deployment
// KServe creates is absorbed with its pod's digest. Changing the runtime's
// image writes the root's status once; deleting the runtime makes the
// runtime unresolved, and the rest of the document stays.
func TestInferenceServiceServingRuntimeReference(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const oldImage, newImage = "vllm/vllm-openai:v0.9.1", "vllm/vllm-openai:v0.9.2"
	objs := c.env.MustApply(t, ns, `
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm-runtime}
spec:
  supportedModelFormats: [{name: vLLM, autoSelect: true}]
  containers:
  - name: kserve-container
    image: "`+oldImage+`"
    args: ["--model=/mnt/models", "--served-model-name={{.Name}}"]
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llama
  annotations: {serving.kserve.io/deploymentMode: RawDeployment}
spec:
  predictor:
    model:
      modelFormat: {name: vLLM}
      runtime: vllm-runtime
      storageUri: hf://meta-llama/Llama-3.1-8B-Instruct
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-predictor
  ownerReferences: [{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: llama, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: llama-predictor}}
  template:
    metadata: {labels: {app: llama-predictor}}
    spec: {containers: [{name: kserve-container, image: "`+oldImage+`"}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: llama-predictor-7d9f
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: llama-predictor, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: llama-predictor}}
  template:
    metadata: {labels: {app: llama-predictor}}
    spec: {containers: [{name: kserve-container, image: "`+oldImage+`"}]}
---`+podYAML("llama-predictor-7d9f-x2k8p", "apps/v1", "ReplicaSet", "llama-predictor-7d9f", "{app: llama-predictor}",
		ctr{"kserve-container", oldImage, kserveDigest}))
	runtime := objs[0]

	a := c.waitAIBOM(t, ns, isvcGK, "llama", all(absorbedLen(1), hasDigest("", "kserve-container", kserveDigest),
		docHas(`"ServingRuntime/vllm-runtime"`, `"ServingRuntime/vllm-runtime:spec.containers[0].image"`)))
	requireAbsorbed(t, a, "Deployment.apps/llama-predictor")
	require.Contains(t, a.Status.Document, `"meta-llama/Llama-3.1-8B-Instruct"`)
	c.waitNoAIBOM(t, ns, deploymentGK, "llama-predictor")
	require.NoError(t, c.controller.WaitSettled(time.Second, eventually))

	// The runtime's image changes: exactly one write of the root's status.
	key := harness.AIBOMKey(ns, isvcGK, "llama")
	stop := c.statusWrites(t, key)
	rt := c.get(t, runtime)
	require.NoError(t, unstructured.SetNestedSlice(rt.Object, []any{map[string]any{
		"name": "kserve-container", "image": newImage, "args": []any{"--model=/mnt/models"},
	}}, "spec", "containers"))
	require.NoError(t, c.env.Client.Update(context.Background(), rt))
	b := c.waitAIBOM(t, ns, isvcGK, "llama", docHas(`"name":"docker.io/vllm/vllm-openai","version":"v0.9.2"`))
	require.Equal(t, a.UID, b.UID)
	require.NoError(t, c.controller.WaitSettled(time.Second, eventually))
	require.Equal(t, 1, stop(), "one status write for one change of the runtime")

	// The runtime is deleted: unresolved, and the rest of the document (the
	// model, the absorbed Deployment) stays.
	require.NoError(t, c.env.Client.Delete(context.Background(), rt))
	d := c.waitAIBOM(t, ns, isvcGK, "llama", docHas(`"unresolved:not-found"`))
	require.Equal(t, a.UID, d.UID, "the AIBOM is kept")
	require.Contains(t, d.Status.Document, `"meta-llama/Llama-3.1-8B-Instruct"`)
	requireAbsorbed(t, d, "Deployment.apps/llama-predictor")
	require.NotContains(t, d.Status.Document, "ServingRuntime/vllm-runtime:spec.containers")
}

// Issue 14, Done when: a RayService absorbs the RayCluster it creates, and
// the digests of the head and worker pods the operator creates under the
// RayCluster reach the RayService's document. The RayCluster gets no
// AIBOM of its own.
func TestRayServiceAbsorbsRayClusterAndPodDigests(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const image = "rayproject/ray-llm:2.46.0-py311-cu124"
	c.env.MustApply(t, ns, `
apiVersion: ray.io/v1
kind: RayService
metadata: {name: qwen}
spec:
  serveConfigV2: |
    applications:
    - name: llm
      import_path: ray.serve.llm:build_openai_app
      args:
        llm_configs:
        - model_loading_config: {model_id: qwen, model_source: Qwen/Qwen2.5-7B-Instruct}
  rayClusterConfig:
    rayVersion: "2.46.0"
    headGroupSpec:
      template:
        spec: {containers: [{name: ray-head, image: "`+image+`"}]}
    workerGroupSpecs:
    - groupName: gpu
      replicas: 1
      template:
        spec: {containers: [{name: ray-worker, image: "`+image+`"}]}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: qwen-raycluster-x7bq2
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayService, name: qwen, controller: true, blockOwnerDeletion: true}]
spec:
  rayVersion: "2.46.0"
  headGroupSpec:
    template:
      spec: {containers: [{name: ray-head, image: "`+image+`"}]}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 1
    template:
      spec: {containers: [{name: ray-worker, image: "`+image+`"}]}
---`+podYAML("qwen-raycluster-x7bq2-head-8x2kd", "ray.io/v1", "RayCluster", "qwen-raycluster-x7bq2", "{ray.io/node-type: head}",
		ctr{"ray-head", image, rayDigest})+`---`+
		podYAML("qwen-raycluster-x7bq2-gpu-worker-5n9qz", "ray.io/v1", "RayCluster", "qwen-raycluster-x7bq2", "{ray.io/node-type: worker}",
			ctr{"ray-worker", image, rayDigest}))

	a := c.waitAIBOM(t, ns, rayServiceGK, "qwen", all(absorbedLen(1),
		hasDigest("head", "ray-head", rayDigest), hasDigest("gpu", "ray-worker", rayDigest)))
	requireAbsorbed(t, a, "RayCluster.ray.io/qwen-raycluster-x7bq2")
	require.Contains(t, a.Status.Document, `"Qwen/Qwen2.5-7B-Instruct"`)
	c.waitNoAIBOM(t, ns, rayClusterGK, "qwen-raycluster-x7bq2")
	c.waitOnlyAIBOMs(t, ns, "RayService/qwen")
}

// Issue 14, Done when: a TrainJob names a ClusterTrainingRuntime (a
// cluster-scoped reference) and absorbs the Jobs of the JobSet the Trainer
// creates; the runtime's trainer image is the one the pods run, with their
// digest.
func TestTrainJobRuntimeReferenceAndJobsAbsorbed(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const image = "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"
	runtimeName := "torch-" + ns // cluster-scoped: one per test namespace
	objs := c.env.MustApply(t, "", `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: `+runtimeName+`}
spec:
  mlPolicy: {numNodes: 1, torch: {numProcPerNode: auto}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec: {containers: [{name: node, image: "`+image+`"}]}
`)
	t.Cleanup(func() { _ = c.env.Client.Delete(context.Background(), objs[0]) })
	c.env.MustApply(t, ns, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: sft}
spec:
  runtimeRef: {name: `+runtimeName+`}
  initializer:
    model: {storageUri: "hf://meta-llama/Llama-3.2-1B-Instruct"}
    dataset: {storageUri: "hf://tatsu-lab/alpaca"}
  trainer:
    numNodes: 2
    resourcesPerNode: {limits: {nvidia.com/gpu: "1"}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: sft
  ownerReferences: [{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: sft, controller: true, blockOwnerDeletion: true}]
spec:
  replicatedJobs:
  - name: node
    replicas: 1
---
apiVersion: batch/v1
kind: Job
metadata:
  name: sft-node-0
  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: sft, controller: true, blockOwnerDeletion: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: node, image: "`+image+`"}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: sft-node-1
  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: sft, controller: true, blockOwnerDeletion: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: node, image: "`+image+`"}]
---`+podYAML("sft-node-0-0-abcde", "batch/v1", "Job", "sft-node-0", "{}", ctr{"node", image, trainDigest}))

	// The JobSet is tracked (the shipped jobset profile): the TrainJob
	// absorbs it with its Jobs.
	a := c.waitAIBOM(t, ns, trainJobGK, "sft", all(absorbedLen(3), hasDigest("node", "node", trainDigest),
		docHas(`"ClusterTrainingRuntime/`+runtimeName+`"`, `"resolved"`)))
	requireAbsorbed(t, a, "Job.batch/sft-node-0", "Job.batch/sft-node-1", "JobSet.jobset.x-k8s.io/sft")
	require.Contains(t, a.Status.Document, `"meta-llama/Llama-3.2-1B-Instruct"`)
	require.Contains(t, a.Status.Document, `"tatsu-lab/alpaca"`)
	c.waitNoAIBOM(t, ns, jobGK, "sft-node-0")
	c.waitOnlyAIBOMs(t, ns, "TrainJob/sft")
}

// Issue 14, Done when: a NIMService whose model is only in its NIMCache gets
// that model, declared, with the NIMCache's locator; a NIMCache created
// after the NIMService re-reconciles it.
func TestNIMServiceModelFromItsNIMCache(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	c.env.MustApply(t, ns, `
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: multi-llm}
spec:
  image: {repository: nvcr.io/nim/nvidia/llm-nim, tag: "1.12.0"}
  storage:
    nimCache: {name: llama-hf}
`)
	// No NIMCache yet: the model is unresolved, the AIBOM is there.
	a := c.waitAIBOM(t, ns, nimGK, "multi-llm", docHas(`"NIMCache/llama-hf"`, `"unresolved:not-found"`))
	c.env.MustApply(t, ns, `
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMCache
metadata: {name: llama-hf}
spec:
  source:
    hf: {endpoint: "https://huggingface.co", namespace: meta-llama, modelName: Llama-3.2-1B-Instruct, authSecret: hf-token}
`)
	b := c.waitAIBOM(t, ns, nimGK, "multi-llm", docHas(`"meta-llama/Llama-3.2-1B-Instruct"`,
		`"NIMCache/llama-hf:spec.source.hf.modelName"`, `"resolved"`))
	require.Equal(t, a.UID, b.UID)
	require.Contains(t, b.Status.Summary.Models, "meta-llama/Llama-3.2-1B-Instruct")
	require.NotContains(t, b.Status.Document, "hf-token", "a Secret's name the NIMCache gives is not reported")
}

// KServe's serverless mode: InferenceService -> Knative Service ->
// Configuration -> Revision -> Deployment -> ReplicaSet -> Pod. The Knative
// kinds are walk-only: the Deployment rolls up into the InferenceService
// through them, and the pod's digest reaches its document.
func TestInferenceServiceServerlessChainThroughKnative(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const image = "kserve/huggingfaceserver:v0.15.2"
	c.env.MustApply(t, ns, `
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: bert
  annotations: {serving.kserve.io/deploymentMode: Serverless}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      image: "`+image+`"
      storageUri: hf://google-bert/bert-base-uncased
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: bert-predictor
  ownerReferences: [{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: bert, controller: true, blockOwnerDeletion: true}]
spec: {}
---
apiVersion: serving.knative.dev/v1
kind: Configuration
metadata:
  name: bert-predictor
  ownerReferences: [{apiVersion: serving.knative.dev/v1, kind: Service, name: bert-predictor, controller: true, blockOwnerDeletion: true}]
spec: {}
---
apiVersion: serving.knative.dev/v1
kind: Revision
metadata:
  name: bert-predictor-00001
  ownerReferences: [{apiVersion: serving.knative.dev/v1, kind: Configuration, name: bert-predictor, controller: true, blockOwnerDeletion: true}]
spec: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: bert-predictor-00001-deployment
  ownerReferences: [{apiVersion: serving.knative.dev/v1, kind: Revision, name: bert-predictor-00001, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: bert}}
  template:
    metadata: {labels: {app: bert}}
    spec: {containers: [{name: kserve-container, image: "`+image+`"}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: bert-predictor-00001-deployment-5c6d
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: bert-predictor-00001-deployment, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: bert}}
  template:
    metadata: {labels: {app: bert}}
    spec: {containers: [{name: kserve-container, image: "`+image+`"}]}
---`+podYAML("bert-predictor-00001-deployment-5c6d-q8w2z", "apps/v1", "ReplicaSet", "bert-predictor-00001-deployment-5c6d", "{app: bert}",
		ctr{"kserve-container", image, kserveDigest}))

	// The Knative Service is tracked (the shipped knative profile): the
	// InferenceService absorbs it with the Deployment of its Revision.
	a := c.waitAIBOM(t, ns, isvcGK, "bert", all(absorbedLen(2), hasDigest("predictor", "kserve-container", kserveDigest)))
	requireAbsorbed(t, a, "Deployment.apps/bert-predictor-00001-deployment", "Service.serving.knative.dev/bert-predictor")
	c.waitOnlyAIBOMs(t, ns, "InferenceService/bert")
}

// A RayJob controls its RayCluster and its submitter Job: one document, the
// RayJob's, absorbing both, with the digests of the cluster's head pod and
// the submitter's pod.
func TestRayJobAbsorbsRayClusterAndSubmitterJob(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const image = "rayproject/ray:2.40.0-gpu"
	const submitter = "rayproject/ray:2.40.0"
	submitterDigest := digestOf("submitter")
	c.env.MustApply(t, ns, `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: batch}
spec:
  entrypoint: python /app/infer.py --model meta-llama/Llama-3.2-3B-Instruct
  rayClusterSpec:
    rayVersion: "2.40.0"
    headGroupSpec:
      template:
        spec: {containers: [{name: ray-head, image: "`+image+`"}]}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: batch-raycluster-k2x9p
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayJob, name: batch, controller: true, blockOwnerDeletion: true}]
spec:
  rayVersion: "2.40.0"
  headGroupSpec:
    template:
      spec: {containers: [{name: ray-head, image: "`+image+`"}]}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: batch
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayJob, name: batch, controller: true, blockOwnerDeletion: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: ray-job-submitter, image: "`+submitter+`"}]
---`+podYAML("batch-raycluster-k2x9p-head-x8k2l", "ray.io/v1", "RayCluster", "batch-raycluster-k2x9p", "{ray.io/node-type: head}",
		ctr{"ray-head", image, rayDigest})+`---`+
		podYAML("batch-q7w2e", "batch/v1", "Job", "batch", "{}", ctr{"ray-job-submitter", submitter, submitterDigest}))

	a := c.waitAIBOM(t, ns, schema.GroupKind{Group: "ray.io", Kind: "RayJob"}, "batch", all(absorbedLen(2),
		hasDigest("head", "ray-head", rayDigest)))
	requireAbsorbed(t, a, "Job.batch/batch", "RayCluster.ray.io/batch-raycluster-k2x9p")
	require.Contains(t, a.Status.Document, `"meta-llama/Llama-3.2-3B-Instruct"`)
	c.waitOnlyAIBOMs(t, ns, "RayJob/batch")
}

// A classic PyTorchJob: the training operator creates the master and worker
// pods directly under it; their digests reach its document.
func TestPyTorchJobPodDigests(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	const image = "registry.example.com/ml/mnist-train:1.2.0"
	c.env.MustApply(t, ns, `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec: {containers: [{name: pytorch, image: "`+image+`", command: [torchrun, /opt/mnist/train.py]}]}
    Worker:
      replicas: 1
      template:
        spec: {containers: [{name: pytorch, image: "`+image+`", resources: {limits: {nvidia.com/gpu: "1"}}}]}
---`+podYAML("mnist-master-0", "kubeflow.org/v1", "PyTorchJob", "mnist", "{training.kubeflow.org/replica-type: master}",
		ctr{"pytorch", image, trainDigest})+`---`+
		podYAML("mnist-worker-0", "kubeflow.org/v1", "PyTorchJob", "mnist", "{training.kubeflow.org/replica-type: worker}",
			ctr{"pytorch", image, trainDigest}))

	a := c.waitAIBOM(t, ns, schema.GroupKind{Group: "kubeflow.org", Kind: "PyTorchJob"}, "mnist",
		all(hasDigest("master", "pytorch", trainDigest), hasDigest("worker", "pytorch", trainDigest)))
	requireAbsorbed(t, a)
	require.Contains(t, a.Status.Document, `"pytorch"`)
}

// A cluster-scoped reference: an InferenceService whose runtime is a
// ClusterServingRuntime (its namespace has no ServingRuntime of that name).
// A change to the cluster runtime re-reconciles the root.
func TestInferenceServiceClusterServingRuntimeChange(t *testing.T) {
	c := beta
	ns := c.newNamespace(t)
	runtimeName := "hf-" + ns // cluster-scoped: one per test namespace
	objs := c.env.MustApply(t, "", `
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata: {name: `+runtimeName+`}
spec:
  supportedModelFormats: [{name: huggingface, autoSelect: true}]
  containers: [{name: kserve-container, image: "kserve/huggingfaceserver:v0.15.1"}]
`)
	t.Cleanup(func() { _ = c.env.Client.Delete(context.Background(), objs[0]) })
	c.env.MustApply(t, ns, `
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: bert}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      runtime: `+runtimeName+`
      storageUri: hf://google-bert/bert-base-uncased
`)
	a := c.waitAIBOM(t, ns, isvcGK, "bert", docHas(`"name":"docker.io/kserve/huggingfaceserver","version":"v0.15.1"`,
		`"ClusterServingRuntime/`+runtimeName+`:spec.containers[0].image"`, `"unresolved:not-found"`))
	csr := c.get(t, objs[0])
	require.NoError(t, unstructured.SetNestedSlice(csr.Object, []any{map[string]any{
		"name": "kserve-container", "image": "kserve/huggingfaceserver:v0.15.2",
	}}, "spec", "containers"))
	require.NoError(t, c.env.Client.Update(context.Background(), csr))
	b := c.waitAIBOM(t, ns, isvcGK, "bert", docHas(`"name":"docker.io/kserve/huggingfaceserver","version":"v0.15.2"`))
	require.Equal(t, a.UID, b.UID)
	require.NotContains(t, b.Status.Document, `"kserve/huggingfaceserver:v0.15.1"`)
}
