package rbac_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// The shipped Deployment runs with --leader-elect: the ServiceAccount, with
// the shipped leader-election Role in its own namespace and the shipped
// ClusterRole, acquires the Lease the controller uses
// (aibom-controller.aibom.dev) in aibom-system and reconciles as the leader.
func TestLeaderElectionWithTheShippedRoles(t *testing.T) {
	const lease = "aibom-controller.aibom.dev" // cmd/controller's LeaderElectionID
	c, err := env.StartControllerWith(harness.ControllerOptions{
		Config:         shipped.Impersonating(env.Config),
		LeaderElection: &harness.LeaderElection{ID: lease, Namespace: shipped.Namespace},
	}, harness.InTreeAdapters()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	require.NoError(t, c.WaitLeading(eventually))

	l := &coordinationv1.Lease{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: shipped.Namespace, Name: lease}, l))
	require.NotNil(t, l.Spec.HolderIdentity)
	require.NotEmpty(t, *l.Spec.HolderIdentity)

	ns := newNamespace(t)
	env.MustApply(t, ns, webChain+harness.PodYAML("web-5f6d7c8b9-qq2xw", "apps/v1", "ReplicaSet", "web-5f6d7c8b9", "vllm", vllmImage, webDigest))
	waitAIBOM(t, ns, deploymentGK, "web", eventually, hasDigest("", "vllm", webDigest))
}
