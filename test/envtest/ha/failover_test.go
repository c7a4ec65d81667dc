package ha

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// Two replicas, A leading. A crashes (its requests stop and its Lease is
// left to expire, as when the process dies) while workloads are being
// created, deleted and changed. B takes over once the Lease expires and
// converges: conservation holds, every document carries its pod's current
// digest, no AIBOM is duplicated or lost (those written by A keep their
// identity), and B wrote no AIBOM before it held the Lease.
func TestFailoverAfterLeaderCrash(t *testing.T) {
	ctx := context.Background()
	const id = "aibom-ha-crash"
	a := replica(t, id, false)
	require.NoError(t, a.WaitLeading(eventually))
	holderA := leaseHolder(t, id)
	b := replica(t, id, false)
	bElected := watchElected(b)

	nss := []string{newNamespace(t), newNamespace(t)}
	cons := env.Conservation(a, nss...)
	digests := workloads(t, nss, "first", 10)
	require.NoError(t, applyErr(nss[0], cronJobChain("nightly")))
	cons.Eventually(t, eventually)
	requireDigests(t, digests)
	require.NoError(t, a.WaitSettled(2*time.Second, eventually))
	requireFollowerWroteNoAIBOM(t, b)
	requireWarmFollower(t, b)
	before := env.AIBOMUIDs(t, nss...)

	// Workloads change while A dies.
	var wg sync.WaitGroup
	var more map[client.ObjectKey]string
	var moreErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		more, moreErr = createWorkloads(nss, "second", 10)
	}()
	a.Crash()
	crashed := time.Now()
	gone := client.ObjectKey{Namespace: nss[1], Name: "first-1"}
	require.NoError(t, env.Client.Delete(ctx, deploymentObject(gone)))
	delete(digests, gone)
	changed := client.ObjectKey{Namespace: nss[0], Name: "first-2"}
	digests[changed] = digestOf("first-2-rolled")
	setPodDigest(t, client.ObjectKey{Namespace: nss[0], Name: "first-2-rs-p0"}, digests[changed])
	wg.Wait()
	require.NoError(t, moreErr)
	for k, v := range more {
		digests[k] = v
	}

	require.NoError(t, b.WaitLeading(eventually))
	if at := bElected.Load(); at != nil {
		t.Logf("B observed its election %s after A crashed (lease duration 4s)", at.Sub(crashed).Round(100*time.Millisecond))
	}
	require.NotEqual(t, holderA, leaseHolder(t, id), "B holds the Lease")

	rep := cons.Eventually(t, eventually)
	requireDigests(t, digests)
	require.NoError(t, b.WaitSettled(2*time.Second, eventually))
	rep, err := cons.Check(ctx)
	require.NoError(t, err)
	require.NoError(t, rep.Err())
	require.Equal(t, len(digests)+1, rep.AIBOMs, "one AIBOM per Deployment and the CronJob's, none duplicated")
	for key, uid := range before {
		if key == harness.AIBOMKey(gone.Namespace, deploymentGK, gone.Name) {
			continue
		}
		got := &v1alpha1.AIBOM{}
		require.NoError(t, env.Client.Get(ctx, key, got), "AIBOM %s written by A was lost", key)
		require.Equal(t, uid, string(got.UID), "AIBOM %s written by A was deleted and re-created", key)
	}
	requireNoWriteBeforeLease(t, "B", b.Requests.Log())
}

// Two replicas, A leading; A stops gracefully and releases its Lease. B
// takes over without waiting for the Lease to expire, and reports what
// changed meanwhile; B wrote no AIBOM before it held the Lease.
func TestGracefulHandover(t *testing.T) {
	ctx := context.Background()
	const id = "aibom-ha-graceful"
	a := replica(t, id, true)
	require.NoError(t, a.WaitLeading(eventually))
	holderA := leaseHolder(t, id)
	b := replica(t, id, true)

	ns := newNamespace(t)
	cons := env.Conservation(a, ns)
	digests := workloads(t, []string{ns}, "first", 5)
	cons.Eventually(t, eventually)
	requireDigests(t, digests)
	require.NoError(t, a.WaitSettled(2*time.Second, eventually))
	requireFollowerWroteNoAIBOM(t, b)
	before := env.AIBOMUIDs(t, ns)

	require.NoError(t, a.Stop())
	require.NotEqual(t, holderA, leaseHolder(t, id), "A released its Lease on the way out")
	for k, v := range workloads(t, []string{ns}, "second", 5) {
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
		require.Equal(t, uid, string(got.UID))
	}
	requireNoWriteBeforeLease(t, "B", b.Requests.Log())
}

func deploymentObject(key client.ObjectKey) client.Object {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
}

// setPodDigest rewrites the image digest a pod's first container reports.
func setPodDigest(t *testing.T, key client.ObjectKey, digest string) {
	t.Helper()
	pod := &corev1.Pod{}
	require.NoError(t, env.Client.Get(context.Background(), key, pod))
	s := &pod.Status.ContainerStatuses[0]
	s.ImageID = "docker.io/vllm/vllm-openai@sha256:" + digest
	require.NoError(t, env.Client.Status().Update(context.Background(), pod))
}
