package ha

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// requireWarmFollower checks that a replica that does not lead has done its
// kind discovery (its readiness check passes, so a rolling update of the
// shipped two-replica Deployment is not stalled) and keeps the kinds' caches
// warm (it has listed and watches Deployments and Pods), while it has
// written no AIBOM.
func requireWarmFollower(t *testing.T, c *harness.Controller) {
	t.Helper()
	require.Eventually(t, c.Supervisor.FirstPassDone, eventually, tick, "a follower finishes its kind discovery (readiness)")
	require.Eventually(t, func() bool {
		n := c.Requests.Snapshot()
		return n["WATCH deployments"] > 0 && n["WATCH pods"] > 0
	}, eventually, tick, "a follower watches the registered kinds")
	requireFollowerWroteNoAIBOM(t, c)
}

// A workload deleted while no controller ran gets no delete event; the
// AIBOM the previous controller wrote for it must still go once a controller
// runs again, and every other AIBOM stay as it is. (For a CRD kind whose
// cache syncs late, faults' TestOwnerKindCRDDeletedWhileItsObjectsAndChildrenExist
// covers the same through a CRD re-installed.)
func TestAIBOMOfWorkloadDeletedWhileNoControllerRanIsRemoved(t *testing.T) {
	ctx := context.Background()
	first, err := env.StartController(apps.New(), batch.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = first.Stop() })

	ns := newNamespace(t)
	cons := harness.Conservation{Reader: env.Client, Registry: first.Registry, Namespaces: []string{ns}}
	digests := workloads(t, []string{ns}, "w", 3)
	require.NoError(t, applyErr(ns, cronJobChain("nightly")))
	cons.Eventually(t, eventually)
	requireDigests(t, digests)
	require.NoError(t, first.WaitSettled(2*time.Second, eventually))
	require.NoError(t, first.Stop())

	gone := client.ObjectKey{Namespace: ns, Name: "w-1"}
	require.NoError(t, env.Client.Delete(ctx, deploymentObject(gone)))
	delete(digests, gone)
	before := env.AIBOMUIDs(t, ns)
	require.Contains(t, before, harness.AIBOMKey(ns, deploymentGK, gone.Name), "the stale AIBOM is there while no controller runs")

	second, err := env.StartController(apps.New(), batch.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = second.Stop() })
	require.Eventually(t, func() bool {
		err := env.Client.Get(ctx, harness.AIBOMKey(ns, deploymentGK, gone.Name), &v1alpha1.AIBOM{})
		return err != nil && client.IgnoreNotFound(err) == nil
	}, eventually, tick, "the AIBOM of the Deployment deleted while no controller ran is removed")
	cons.Eventually(t, eventually)
	requireDigests(t, digests)
	for key, uid := range before {
		if key == harness.AIBOMKey(ns, deploymentGK, gone.Name) {
			continue
		}
		got := &v1alpha1.AIBOM{}
		require.NoError(t, env.Client.Get(ctx, key, got), "AIBOM %s was lost", key)
		require.Equal(t, uid, string(got.UID), "AIBOM %s was deleted and re-created", key)
	}
}
