package ha

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// The kube-apiserver goes away for longer than the leader's renew deadline.
// The leader cannot renew its Lease, stops leading and its manager exits (in
// a pod, the process would restart); after the API server is back, the
// other replica acquires the Lease and converges on what changed, and it
// wrote no AIBOM before it held the Lease.
func TestAPIServerOutageLongerThanTheRenewDeadline(t *testing.T) {
	ctx := context.Background()
	const id = "aibom-ha-outage"
	a := replica(t, id, false)
	require.NoError(t, a.WaitLeading(eventually))
	b := replica(t, id, false)

	ns := newNamespace(t)
	cons := env.Conservation(a, ns)
	digests := workloads(t, []string{ns}, "first", 5)
	cons.Eventually(t, eventually)
	requireDigests(t, digests)
	require.NoError(t, a.WaitSettled(2*time.Second, eventually))
	requireFollowerWroteNoAIBOM(t, b)
	before := env.AIBOMUIDs(t, ns)

	require.NoError(t, env.StopAPIServer())
	select {
	case <-a.Exited():
	case <-time.After(eventually):
		t.Fatal("the leader kept running without its Lease")
	}
	lastOfA := len(a.Requests.Log())
	select {
	case <-b.Exited():
		t.Fatal("the follower's manager exited during the outage")
	default:
	}
	require.False(t, b.Leading(), "nobody can acquire a Lease while the API server is down")
	require.NoError(t, env.StartAPIServer())

	changed := client.ObjectKey{Namespace: ns, Name: "first-3"}
	digests[changed] = digestOf("first-3-rolled")
	setPodDigest(t, client.ObjectKey{Namespace: ns, Name: "first-3-rs-p0"}, digests[changed])
	for k, v := range workloads(t, []string{ns}, "second", 3) {
		digests[k] = v
	}

	require.NoError(t, b.WaitLeading(eventually))
	cons.Eventually(t, eventually)
	requireDigests(t, digests)
	require.NoError(t, b.WaitSettled(2*time.Second, eventually))
	require.NoError(t, cons.Verify(ctx))
	for key, uid := range before {
		got := &v1alpha1.AIBOM{}
		require.NoError(t, env.Client.Get(ctx, key, got))
		require.Equal(t, uid, string(got.UID), "AIBOM %s was deleted and re-created", key)
	}
	require.Empty(t, aibomWrites(a.Requests.Log()[lastOfA:]), "the former leader wrote after its manager exited")
	requireNoWriteBeforeLease(t, "B", b.Requests.Log())
}
