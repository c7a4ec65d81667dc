package gc

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Churn with the real garbage collector and workload controllers: owners
// created, deleted in the background while their children are still being
// made, and the namespace's opt-in flapped, interleaved at random (seeded).
// Once it stops, conservation holds: every workload that exists is in
// exactly one AIBOM, and no AIBOM is left for one that does not.
func TestChurnWithTheRealGarbageCollectorConserves(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "churn", true)
	rng := rand.New(rand.NewSource(2929))
	var live []*unstructured.Unstructured
	ops := map[string]int{}
	for step := 0; step < 16; step++ {
		switch r := rng.Float64(); {
		case r < 0.35:
			ops["deployment"]++
			live = append(live, env.MustApply(t, ns, deploymentYAML(fmt.Sprintf("d%d", step), 1+rng.Intn(2)))[0])
		case r < 0.55:
			ops["lws"]++
			objs := env.MustApply(t, ns, lwsYAML(fmt.Sprintf("l%d", step)))
			live = append(live, objs[0])
		case r < 0.85 && len(live) > 0:
			ops["delete"]++
			i := rng.Intn(len(live))
			err := env.Client.Delete(ctx, live[i], client.PropagationPolicy(metav1.DeletePropagationBackground))
			require.NoError(t, client.IgnoreNotFound(err))
			live = append(live[:i], live[i+1:]...)
		default:
			ops["flap"]++
			env.SetOptIn(t, ns, "false")
			time.Sleep(time.Duration(rng.Intn(400)) * time.Millisecond)
			env.SetOptIn(t, ns, "true")
		}
		_, err := env.RunPods(ctx, ns, digestOf)
		require.NoError(t, err)
		time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond)
	}
	for _, op := range []string{"deployment", "lws", "delete", "flap"} {
		require.Positive(t, ops[op], "the seeded churn does %s: %v", op, ops)
	}
	// The controllers and the collector finish; every pod left runs.
	require.Eventually(t, func() bool {
		_, err := env.RunPods(ctx, ns, digestOf)
		require.NoError(t, err)
		return env.Conservation(controller, ns).Verify(ctx) == nil
	}, eventually, time.Second, "conservation after the churn")
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))
	rep, err := env.Conservation(controller, ns).Check(ctx)
	require.NoError(t, err)
	require.NoError(t, rep.Err())
	require.Equal(t, len(live), rep.AIBOMs, "one AIBOM per owner left: %v", aibomNames(t, ns))
	var pods corev1.PodList
	require.NoError(t, env.Client.List(ctx, &pods, client.InNamespace(ns)))
	t.Logf("after the churn %v: %d owners, %d pods, %d AIBOMs", ops, len(live), len(pods.Items), rep.AIBOMs)
	// Opted out, the namespace writes nothing into the other tests' counts.
	env.SetOptIn(t, ns, "false")
	require.Eventually(t, func() bool { return len(aibomNames(t, ns)) == 0 }, eventually, tick)
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))
}

func deploymentYAML(name string, replicas int) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: vllm, image: "%[3]s", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
`, name, replicas, vllmImage)
}

// lwsYAML is a LeaderWorkerSet and the leader StatefulSet its operator
// would make (whose pod the StatefulSet controller makes).
func lwsYAML(name string) string {
	return fmt.Sprintf(`
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: %[1]s}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 1
    leaderTemplate:
      spec:
        containers:
        - {name: vllm-leader, image: "%[2]s", args: ["--model", "Qwen/Qwen2.5-0.5B"]}
    workerTemplate:
      spec:
        containers:
        - {name: vllm-worker, image: "%[2]s"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: %[1]s
  ownerReferences: [{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: %[1]s, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  serviceName: %[1]s
  selector: {matchLabels: {lws: %[1]s}}
  template:
    metadata: {labels: {lws: %[1]s}}
    spec: {containers: [{name: vllm-leader, image: "%[2]s"}]}
`, name, vllmImage)
}
