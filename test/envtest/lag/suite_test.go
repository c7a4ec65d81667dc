// Package lag drives the controller through lagging and unreadable caches
// against a real API server (issue #15): the AIBOM informer and an owner
// kind's informer deliver events seconds late, or an owner kind's informer
// never syncs. After each case the conservation invariant (every tracked
// workload in exactly one AIBOM, no AIBOM left over) must hold against the
// cluster, and nothing may have been decided on what the caches did not
// know yet.
package lag

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var env *harness.Env

const eventually = 90 * time.Second

var (
	cronJobGK = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	jobGK     = schema.GroupKind{Group: "batch", Kind: "Job"}
)

func TestMain(m *testing.M) {
	var err error
	env, err = harness.StartEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// startController starts a controller (apps and batch adapters) whose
// connection goes through lag, and waits until every kind but unreadable
// has synced (a delayed watch delays the initial sync too); it is stopped
// when the test ends. One controller runs at a time.
func startController(t *testing.T, lag *harness.Lag, unreadable ...schema.GroupKind) *harness.Controller {
	t.Helper()
	c, err := env.StartControllerWith(harness.ControllerOptions{Lag: lag, DiscoveryInterval: time.Second}, apps.New(), batch.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	for _, e := range c.Registry.Entries() {
		if slices.Contains(unreadable, e.GroupKind()) {
			continue
		}
		require.Eventually(t, func() bool { return c.Supervisor.Healthy(e.GroupKind()) }, eventually, 20*time.Millisecond, "kind %s never synced", e.Kind)
	}
	waitIdle(t)
	return c
}

// waitIdle waits until the controller's queue is empty and no worker is
// busy for a few polls in a row (the replay of what earlier tests left in
// the cluster is over), so that a test's timing depends on its own objects.
func waitIdle(t *testing.T) {
	t.Helper()
	idle := 0
	require.Eventually(t, func() bool {
		busy := harness.MetricValue("workqueue_depth", map[string]string{"name": core.ControllerName}) +
			harness.MetricValue("controller_runtime_active_workers", map[string]string{"controller": core.ControllerName})
		if busy == 0 {
			idle++
		} else {
			idle = 0
		}
		return idle >= 5
	}, eventually, 50*time.Millisecond, "the controller never went idle")
}

// cronJobWithJob is a CronJob and the Job it spawned (controlled by it).
const cronJobWithJob = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: eval, image: "vllm/vllm-openai:v0.8.5", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-29000000
  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly, controller: true, blockOwnerDeletion: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: eval, image: "vllm/vllm-openai:v0.8.5", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
`

// readyNamespace creates an opted-in namespace and waits until the
// controller's caches are filled for it: from then on, its objects reach
// the caches through their watches only, with the lag the test injects.
// (Before, an object created while the namespace was being filled could
// reach a cache through the fill's list, unaffected by a watch's lag.)
func readyNamespace(t *testing.T, c *harness.Controller) string {
	t.Helper()
	ns := env.NewNamespace(t, "lag", true)
	require.Eventually(t, func() bool { return c.Supervisor.Namespaces.OptedIn(ns) }, eventually, 10*time.Millisecond,
		"namespace %s never ready", ns)
	return ns
}
