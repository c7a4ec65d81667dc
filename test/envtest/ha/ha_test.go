// Package ha runs two controller replicas with leader election against one
// real API server (issue #8): only the leader writes AIBOMs; when it crashes
// (its Lease left to expire) or steps down (its Lease released), the other
// replica takes over and converges without duplicating or losing an AIBOM.
package ha

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var env *harness.Env

const (
	eventually = 90 * time.Second
	tick       = 200 * time.Millisecond
	// leaseNamespace holds the replicas' Leases (kube-apiserver creates it).
	leaseNamespace = "kube-system"
)

func TestMain(m *testing.M) {
	var err error
	env, err = harness.StartEnvWith(harness.EnvOptions{RestartableAPIServer: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// replica starts one controller campaigning for the Lease id.
func replica(t *testing.T, id string, releaseOnCancel bool) *harness.Controller {
	t.Helper()
	c, err := env.StartControllerWith(harness.ControllerOptions{LeaderElection: &harness.LeaderElection{
		ID: id, Namespace: leaseNamespace,
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: time.Second,
		ReleaseOnCancel: releaseOnCancel,
	}}, apps.New(), batch.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

func newNamespace(t *testing.T) string {
	t.Helper()
	return env.NewNamespace(t, "ha", true)
}

func applyErr(ns, yaml string) error {
	_, err := env.Apply(context.Background(), ns, yaml)
	return err
}

// digestOf is a distinct, valid sha256 hex per label.
func digestOf(label string) string { return harness.PatternDigest("e", label) }

// cronJobChain is a CronJob with the Job it spawned: one AIBOM.
func cronJobChain(name string) string {
	return fmt.Sprintf(`
apiVersion: batch/v1
kind: CronJob
metadata: {name: %[1]s}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3"}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: %[1]s-1
  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: %[1]s, controller: true, blockOwnerDeletion: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3"}]
`, name)
}

// workloads creates count Deployment chains named prefix-<i> spread over
// the namespaces, and returns each Deployment's pod digest.
func workloads(t *testing.T, nss []string, prefix string, count int) map[client.ObjectKey]string {
	t.Helper()
	out, err := createWorkloads(nss, prefix, count)
	require.NoError(t, err)
	return out
}

// createWorkloads is workloads for a goroutine.
func createWorkloads(nss []string, prefix string, count int) (map[client.ObjectKey]string, error) {
	out := map[client.ObjectKey]string{}
	for i := 0; i < count; i++ {
		ns, name := nss[i%len(nss)], fmt.Sprintf("%s-%d", prefix, i)
		if err := applyErr(ns, harness.DeploymentChain(name, digestOf(name))); err != nil {
			return out, err
		}
		out[client.ObjectKey{Namespace: ns, Name: name}] = digestOf(name)
	}
	return out, nil
}

var deploymentGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}

// requireDigests waits until every Deployment's document names its digest.
func requireDigests(t *testing.T, digests map[client.ObjectKey]string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for key, d := range digests {
			a := &v1alpha1.AIBOM{}
			if env.Client.Get(context.Background(), harness.AIBOMKey(key.Namespace, deploymentGK, key.Name), a) != nil || !strings.Contains(a.Status.Document, d) {
				return false
			}
		}
		return true
	}, eventually, tick, "every Deployment's document names its pod's digest")
}

// leaseHolder reads the Lease's holder.
func leaseHolder(t *testing.T, id string) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: leaseNamespace, Name: id}, lease))
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// aibomWrites returns the AIBOM writes of a request log.
func aibomWrites(log []harness.Request) []harness.Request {
	var out []harness.Request
	for _, r := range log {
		if r.Write() && strings.Contains(r.Key, " aiboms") {
			out = append(out, r)
		}
	}
	return out
}

// requireNoWriteBeforeLease checks, on the replica's own request log, that
// it sent its first AIBOM write only after the response that made it the
// Lease's holder (its first successful Lease write: a follower never writes
// the Lease). The order is the log's, not a clock's.
func requireNoWriteBeforeLease(t *testing.T, name string, log []harness.Request) {
	t.Helper()
	var acquired *harness.Request
	for i, r := range log {
		if r.Write() && strings.HasSuffix(r.Key, " leases") && r.Status >= 200 && r.Status < 300 {
			acquired = &log[i]
			break
		}
	}
	require.NotNil(t, acquired, "replica %s never acquired the Lease", name)
	writes := aibomWrites(log)
	require.NotEmpty(t, writes, "replica %s never wrote an AIBOM", name)
	for _, w := range writes {
		require.Greater(t, w.Sent, acquired.Done, "replica %s sent %s (at %s) before it held the Lease (acquired at %s)",
			name, w.Key, w.At.Format(time.RFC3339Nano), acquired.At.Format(time.RFC3339Nano))
	}
}

// requireFollowerWroteNoAIBOM checks that a replica that does not lead has
// written no AIBOM. The log is read while it provably does not lead (it did
// not lead after the read either).
func requireFollowerWroteNoAIBOM(t *testing.T, c *harness.Controller) []harness.Request {
	t.Helper()
	log := c.Requests.Log()
	require.False(t, c.Leading(), "the follower leads")
	require.Empty(t, aibomWrites(log), "a follower wrote AIBOMs")
	return log
}

// watchElected records when the replica observes its election.
func watchElected(c *harness.Controller) *atomic.Pointer[time.Time] {
	var at atomic.Pointer[time.Time]
	go func() {
		<-c.Elected()
		now := time.Now()
		at.Store(&now)
	}()
	return &at
}
