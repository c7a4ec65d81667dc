package lag

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// outcomes sums aibom_workload_reconcile_outcomes_total of Deployments by
// outcome.
func deploymentOutcome(outcome string) float64 {
	return harness.MetricValue("aibom_workload_reconcile_outcomes_total", map[string]string{"kind": "Deployment.apps", "outcome": outcome})
}

// The periodic re-verification, on a settled cluster, after a restart (the
// new process has no record of its predecessor's writes): a pass reconciles
// every root and every rolled-up workload again from the caches, issues no
// API request and writes nothing.
func TestResyncPassWritesNothingWhenNothingChanged(t *testing.T) {
	const roots = 40
	first, err := env.StartControllerWith(harness.ControllerOptions{}, apps.New(), batch.New())
	require.NoError(t, err)
	ns := env.NewNamespace(t, "lag", true)
	for i := range roots {
		env.MustApply(t, ns, harness.DeploymentChain(fmt.Sprintf("llama-%02d", i), harness.PatternDigest("d", fmt.Sprint(i))))
	}
	env.Conservation(first, ns).Eventually(t, eventually)
	require.NoError(t, first.WaitSettled(2*time.Second, eventually))
	require.NoError(t, first.Stop())

	c, err := env.StartControllerWith(harness.ControllerOptions{}, apps.New(), batch.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	require.NoError(t, c.WaitSettled(2*time.Second, eventually))
	coldWrites := map[string]int{}
	for k, v := range harness.Writes(c.Requests.Snapshot()) {
		if strings.Contains(k, " aiboms") {
			coldWrites[k] = v
		}
	}
	t.Logf("restart: %d root reconciles verified the stored documents; writes %v", roots, coldWrites)

	before, unchanged := c.Requests.Snapshot(), deploymentOutcome("unchanged")
	start := time.Now()
	n := c.Reconciler.Resync(context.Background(), 1000)
	require.GreaterOrEqual(t, n, roots)
	require.Eventually(t, func() bool { return deploymentOutcome("unchanged")-unchanged >= roots }, eventually, 20*time.Millisecond)
	took := time.Since(start)
	require.NoError(t, c.WaitSettled(time.Second, eventually))
	since := c.Requests.Since(before)
	t.Logf("re-verification pass: %d workloads enqueued, every root reconciled in %s; API requests %v", n, took.Round(time.Millisecond), since)
	require.Empty(t, since, "a pass over a settled cluster reads only the caches and writes nothing")
	require.Empty(t, coldWrites, "a restart verifies the stored documents without rewriting them")
	require.NoError(t, env.Conservation(c, ns).Verify(context.Background()))
}
