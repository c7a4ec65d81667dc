// Package gc runs the controller next to a real kube-controller-manager (the
// garbage collector and the workload controllers, built from the Go module
// proxy by `make tools`): Deployments make ReplicaSets and Pods, StatefulSets
// make Pods, and deleting an owner deletes its dependents for real. It checks
// that a background deletion, where each child's controller reference names
// a gone owner until the collector deletes it, writes no AIBOM for any child
// (#29 item 9: a dangling reference waits its grace).
package gc

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/adapters/kuberay"
	"github.com/aibom-dev/aibom/adapters/lws"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
)

const (
	eventually = 90 * time.Second
	tick       = 200 * time.Millisecond
	vllmImage  = "vllm/vllm-openai:v0.8.5"
)

var (
	lwsGK         = schema.GroupKind{Group: "leaderworkerset.x-k8s.io", Kind: "LeaderWorkerSet"}
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	env, err = harness.StartEnvWith(harness.EnvOptions{CRDDirs: []string{"test/crds/lws", "test/crds/kuberay"}, ControllerManager: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	// The production grace: the collector must act within it.
	controller, err = env.StartControllerWith(harness.ControllerOptions{DanglingOwnerGrace: reconcile.DefaultDanglingGrace},
		apps.New(), batch.New(), lws.New(), kuberay.New())
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest: start controller:", err)
		return 1
	}
	defer func() { _ = controller.Stop() }()
	return m.Run()
}

func digestOf(pod, container string) string { return harness.SHA256Hex(pod + "/" + container) }

// runPods waits until n pods exist in ns (made by the workload controllers)
// and starts them as a kubelet would.
func runPods(t *testing.T, ns string, n int) {
	t.Helper()
	started := 0
	require.Eventually(t, func() bool {
		k, err := env.RunPods(context.Background(), ns, digestOf)
		require.NoError(t, err)
		started += k
		return started >= n
	}, eventually, tick, "%d pods made and started in %s", n, ns)
}

func aibomNames(t *testing.T, ns string) []string {
	t.Helper()
	var list v1alpha1.AIBOMList
	require.NoError(t, env.Client.List(context.Background(), &list, client.InNamespace(ns)))
	var out []string
	for _, a := range list.Items {
		out = append(out, a.Spec.Subject.Kind+"/"+a.Spec.Subject.Name)
	}
	return out
}

func waitAIBOM(t *testing.T, ns string, gk schema.GroupKind, name string, ok func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	var got *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		if err := env.Client.Get(context.Background(), harness.AIBOMKey(ns, gk, name), a); err != nil {
			return false
		}
		got = a
		return ok(a)
	}, eventually, tick, "AIBOM of %s/%s in %s; AIBOMs there: %v", gk.Kind, name, ns, aibomNames(t, ns))
	return got
}

// gone waits until no object of the listed kinds is left in ns.
func gone(t *testing.T, ns string, lists ...client.ObjectList) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, l := range lists {
			require.NoError(t, env.Client.List(context.Background(), l, client.InNamespace(ns)))
			if meta.LenList(l) > 0 {
				return false
			}
		}
		return true
	}, eventually, tick, "the garbage collector deletes the dependents in %s", ns)
}

func list(apiVersion, kind string) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind + "List")
	return l
}

// aibomCreates counts the controller's AIBOM creations since before.
func aibomCreates(before map[string]int) int {
	return controller.Requests.Since(before)["POST aiboms"]
}

// A LeaderWorkerSet as its operator builds it: the leader StatefulSet under
// the LWS, the worker StatefulSet under the leader Pod (which the
// StatefulSet controller makes). Deleted with the default (background)
// propagation, the collector deletes the leader StatefulSet, its pod, the
// worker StatefulSet and its pods, one level at a time; each child's
// reference dangles meanwhile. Not one AIBOM is written for any of them.
func TestBackgroundDeleteOfALeaderWorkerSetWritesNoAIBOMForItsChildren(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "gc", true)
	owner := env.MustApply(t, ns, `
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
        - {name: vllm-leader, image: "`+vllmImage+`", args: ["--model", "Qwen/Qwen2.5-0.5B"]}
    workerTemplate:
      spec:
        containers:
        - {name: vllm-worker, image: "`+vllmImage+`"}
`)[0]
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm
  ownerReferences: [{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: vllm, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  serviceName: vllm
  selector: {matchLabels: {role: leader}}
  template:
    metadata: {labels: {role: leader}}
    spec: {containers: [{name: vllm-leader, image: "`+vllmImage+`"}]}
`)
	runPods(t, ns, 1)
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm-0
  ownerReferences: [{apiVersion: v1, kind: Pod, name: vllm-0, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  serviceName: vllm
  selector: {matchLabels: {role: worker}}
  template:
    metadata: {labels: {role: worker}}
    spec: {containers: [{name: vllm-worker, image: "`+vllmImage+`"}]}
`)
	runPods(t, ns, 1)
	waitAIBOM(t, ns, lwsGK, "vllm", func(a *v1alpha1.AIBOM) bool {
		return len(a.Status.Absorbed) == 2 && a.Status.Summary.Runtime != ""
	})
	require.NoError(t, env.Conservation(controller, ns).Verify(ctx))
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))

	before := controller.Requests.Snapshot()
	require.NoError(t, env.Client.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	gone(t, ns, list("apps/v1", "StatefulSet"), &corev1.PodList{})
	require.Eventually(t, func() bool { return len(aibomNames(t, ns)) == 0 }, eventually, tick, "the LWS's AIBOM is deleted")
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))
	require.Zero(t, aibomCreates(before), "no AIBOM for a child whose owner was deleted: %v", harness.Writes(controller.Requests.Since(before)))
	require.Equal(t, 1, controller.Requests.Since(before)["DELETE aiboms"], "the owner's AIBOM, and nothing else")
}

// A Deployment's ReplicaSet and Pods made by the real controllers: the
// Deployment's document has the pods' digests; deleted in the background,
// the ReplicaSet (walk-only) and its pods dangle until collected and get no
// AIBOM of their own, as a generic root or otherwise.
func TestBackgroundDeleteOfADeploymentWritesNoAIBOMForItsReplicaSet(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "gc", true)
	d := env.MustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: vllm, image: "`+vllmImage+`", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
`)[0]
	runPods(t, ns, 2)
	a := waitAIBOM(t, ns, deploymentGK, "web", func(a *v1alpha1.AIBOM) bool {
		return len(a.Status.Absorbed) == 0 && a.Status.Summary.Runtime != "" && a.Status.DocumentSHA256 != ""
	})
	require.Empty(t, a.Status.Absorbed, "a ReplicaSet is walk-only: not listed")
	require.NoError(t, env.Conservation(controller, ns).Verify(ctx))
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))

	before := controller.Requests.Snapshot()
	require.NoError(t, env.Client.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	gone(t, ns, list("apps/v1", "ReplicaSet"), &corev1.PodList{})
	require.Eventually(t, func() bool { return len(aibomNames(t, ns)) == 0 }, eventually, tick)
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))
	require.Zero(t, aibomCreates(before), "writes: %v", harness.Writes(controller.Requests.Since(before)))
	_ = statefulSetGK
}

// A RayJob as KubeRay builds it: a RayCluster (its head pod made by hand:
// KubeRay creates pods itself) and a submitter Job, whose pod the real Job
// controller makes. Deleted in the background, the RayCluster and the Job
// (both tracked kinds) and every pod dangle until collected: none gets an
// AIBOM.
func TestBackgroundDeleteOfARayJobWritesNoAIBOMForItsClusterOrJob(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "gc", true)
	const rayImage = "rayproject/ray-ml:2.40.0-gpu"
	job := env.MustApply(t, ns, `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: batch}
spec:
  entrypoint: python /app/infer.py --model meta-llama/Llama-3.2-3B-Instruct
  rayClusterSpec:
    rayVersion: "2.40.0"
    headGroupSpec:
      template:
        spec: {containers: [{name: ray-head, image: "`+rayImage+`"}]}
`)[0]
	env.MustApply(t, ns, `
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: batch-raycluster-k2x9p
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayJob, name: batch, controller: true, blockOwnerDeletion: true}]
spec:
  rayVersion: "2.40.0"
  headGroupSpec:
    template:
      spec: {containers: [{name: ray-head, image: "`+rayImage+`"}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: batch-raycluster-k2x9p-head-x8k2l
  labels: {ray.io/node-type: head}
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayCluster, name: batch-raycluster-k2x9p, controller: true, blockOwnerDeletion: true}]
spec: {containers: [{name: ray-head, image: "`+rayImage+`"}]}
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
      containers: [{name: ray-job-submitter, image: "`+rayImage+`"}]
`)
	runPods(t, ns, 2) // the head, and the submitter the Job controller made
	waitAIBOM(t, ns, schema.GroupKind{Group: "ray.io", Kind: "RayJob"}, "batch", func(a *v1alpha1.AIBOM) bool {
		return len(a.Status.Absorbed) == 2
	})
	require.NoError(t, env.Conservation(controller, ns).Verify(ctx))
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))

	before := controller.Requests.Snapshot()
	require.NoError(t, env.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	gone(t, ns, list("ray.io/v1", "RayCluster"), list("batch/v1", "Job"), &corev1.PodList{})
	require.Eventually(t, func() bool { return len(aibomNames(t, ns)) == 0 }, eventually, tick)
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))
	require.Zero(t, aibomCreates(before), "writes: %v", harness.Writes(controller.Requests.Since(before)))
}
