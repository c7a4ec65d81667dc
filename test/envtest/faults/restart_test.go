package faults

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const nightly = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-1
  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly, controller: true, blockOwnerDeletion: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: adoptee}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3"}]
`

// The kube-apiserver is stopped while the controller reconciles a batch of
// 30 Deployments (with their ReplicaSets and running Pods) and a CronJob
// chain, and started again on the same address with the same etcd. Right
// after, while the controller's watches are still reconnecting, workloads
// change: one is deleted, a pod's digest changes, a standalone Job is adopted
// by the CronJob, new Deployments appear and a namespace opts out. The
// controller must reconnect and converge: conservation holds, every document
// carries its pod's current digest, and no AIBOM whose workload is still a
// root was deleted (or deleted and re-created) on the way.
func TestAPIServerRestartedDuringReconciles(t *testing.T) {
	ctx := context.Background()
	nss := []string{newNamespace(t), newNamespace(t), newNamespace(t)}
	optOut := newNamespace(t)
	scope := append(append([]string{}, nss...), optOut)
	digests := map[client.ObjectKey]string{} // Deployment -> the digest its pod runs

	// Objects the controller finished before the fault.
	env.MustApply(t, nss[0], nightly)
	for i := 0; i < 2; i++ {
		name := fmt.Sprintf("out-%d", i)
		env.MustApply(t, optOut, harness.DeploymentChain(name, digestOf(name)))
	}
	conservation(scope...).Eventually(t, eventually)

	// The batch: 30 Deployments, 10 per namespace; the API server goes down
	// as soon as the controller has written some of their AIBOMs.
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for i := 0; i < 30; i++ {
		ns, name := nss[i%3], fmt.Sprintf("d-%d", i)
		digests[client.ObjectKey{Namespace: ns, Name: name}] = digestOf(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- applyErr(ns, harness.DeploymentChain(name, digestOf(name)))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		for key := range digests {
			if getAIBOM(t, harness.AIBOMKey(key.Namespace, deploymentGK, key.Name)) != nil {
				return true
			}
		}
		return false
	}, eventually, tick/10, "the controller never started on the batch")
	before := env.AIBOMUIDs(t, scope...)
	address := env.APIServerAddress()
	sample := &unstructured.Unstructured{}
	sample.SetAPIVersion("apps/v1")
	sample.SetKind("Deployment")
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: nss[1], Name: "d-1"}, sample))
	stopAt := len(controller.Requests.Log())

	require.NoError(t, env.StopAPIServer())
	t.Logf("kube-apiserver stopped with %d AIBOMs in the scope (4 from before the batch)", len(before))
	// The outage is real: the test's client and the controller's requests
	// fail.
	require.Error(t, env.Client.List(ctx, &v1alpha1.AIBOMList{}))
	require.Eventually(t, func() bool {
		for _, r := range controller.Requests.Log()[stopAt:] {
			if r.Done != 0 && r.Status == 0 {
				return true
			}
		}
		return false
	}, eventually, tick, "the controller never noticed the outage")

	require.NoError(t, env.StartAPIServer())
	require.Equal(t, address, env.APIServerAddress(), "the API server came back on the same address")
	// etcd kept its data: the objects and their identities survived.
	again := &unstructured.Unstructured{}
	again.SetAPIVersion("apps/v1")
	again.SetKind("Deployment")
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(sample), again))
	require.Equal(t, sample.GetUID(), again.GetUID())

	// Changes right after the restart, before the controller's watches are
	// necessarily back.
	gone := client.ObjectKey{Namespace: nss[0], Name: "d-0"}
	deleteObject(t, "apps/v1", "Deployment", gone)
	delete(digests, gone)

	changed := client.ObjectKey{Namespace: nss[1], Name: "d-4"}
	digests[changed] = digestOf("d-4-rolled")
	setPodDigest(t, client.ObjectKey{Namespace: nss[1], Name: "d-4-rs-p0"}, digests[changed])

	adoptee := getObject(t, "batch/v1", "Job", client.ObjectKey{Namespace: nss[0], Name: "adoptee"})
	cron := getObject(t, "batch/v1", "CronJob", client.ObjectKey{Namespace: nss[0], Name: "nightly"})
	adoptee.SetOwnerReferences([]metav1.OwnerReference{harness.ControllerRef(cron)})
	require.NoError(t, env.Client.Update(ctx, adoptee))

	for i := 30; i < 35; i++ {
		ns, name := nss[2], fmt.Sprintf("d-%d", i)
		digests[client.ObjectKey{Namespace: ns, Name: name}] = digestOf(name)
		env.MustApply(t, ns, harness.DeploymentChain(name, digestOf(name)))
	}

	out := &corev1.Namespace{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: optOut}, out))
	delete(out.Labels, graph.OptInLabel)
	require.NoError(t, env.Client.Update(ctx, out))

	// Converged.
	rep := conservation(scope...).Eventually(t, eventually)
	t.Logf("converged: %d workloads, %d roots, %d AIBOMs", rep.Workloads, rep.Roots, rep.AIBOMs)
	require.Equal(t, len(digests)+1, rep.AIBOMs, "one AIBOM per Deployment and the CronJob's")
	require.Eventually(t, func() bool {
		for key, d := range digests {
			if !hasDigest(t, harness.AIBOMKey(key.Namespace, deploymentGK, key.Name), d) {
				return false
			}
		}
		return true
	}, eventually, tick, "every Deployment's document carries its pod's current digest")
	cronDoc := getAIBOM(t, harness.AIBOMKey(nss[0], cronJobGK, "nightly"))
	require.Equal(t, []string{"Job.batch/adoptee", "Job.batch/nightly-1"}, cronDoc.Status.Absorbed)

	// No AIBOM that should exist was lost: those written before the outage
	// kept their identity, except the deleted Deployment's, the adopted Job's
	// and the opted-out namespace's.
	requireSameAIBOMs(t, before, func(key client.ObjectKey) bool {
		return key != harness.AIBOMKey(gone.Namespace, deploymentGK, gone.Name) &&
			key != harness.AIBOMKey(nss[0], jobGK, "adoptee") && key.Namespace != optOut
	})

	// The supervisor's watches are healthy again.
	for _, kind := range []string{"Deployment.apps", "ReplicaSet.apps", "Pod", "Job.batch", "CronJob.batch", "StatefulSet.apps"} {
		require.Eventually(t, func() bool { return gaugeValue("aibom_watch_healthy", kind) == 1 }, eventually, tick, "watch of %s", kind)
	}
}

func getObject(t *testing.T, apiVersion, kind string, key client.ObjectKey) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	require.NoError(t, env.Client.Get(context.Background(), key, u))
	return u
}

func deleteObject(t *testing.T, apiVersion, kind string, key client.ObjectKey, opts ...client.DeleteOption) {
	t.Helper()
	require.NoError(t, env.Client.Delete(context.Background(), getObject(t, apiVersion, kind, key), opts...))
}

// setPodDigest rewrites the image digest a pod's first container reports.
func setPodDigest(t *testing.T, key client.ObjectKey, digest string) {
	t.Helper()
	pod := &corev1.Pod{}
	require.NoError(t, env.Client.Get(context.Background(), key, pod))
	s := &pod.Status.ContainerStatuses[0]
	repo, _, _ := document.ParseImage(s.Image)
	s.ImageID = repo + "@sha256:" + digest
	require.NoError(t, env.Client.Status().Update(context.Background(), pod))
}

// gaugeValue reads a gauge with a kind label from the process's registry;
// -1 when absent.
func gaugeValue(name, kind string) float64 {
	if v, ok := harness.LookupMetric(name, map[string]string{"kind": kind}); ok {
		return v
	}
	return -1
}
