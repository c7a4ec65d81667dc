package idle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var deploymentGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}

// waitDocument waits until the AIBOM of Deployment name in ns is Ready and
// its document contains want.
func waitDocument(t *testing.T, ns, name, want string) *v1alpha1.AIBOM {
	t.Helper()
	var a v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		if err := env.Client.Get(context.Background(), harness.AIBOMKey(ns, deploymentGK, name), &a); err != nil {
			return false
		}
		return strings.Contains(a.Status.Document, want)
	}, eventually, tick, "AIBOM of %s/%s with %q", ns, name, want)
	return &a
}

func aibomsIn(t *testing.T, ns string) int {
	t.Helper()
	var list v1alpha1.AIBOMList
	require.NoError(t, env.Client.List(context.Background(), &list, client.InNamespace(ns)))
	return len(list.Items)
}

// With nothing changing, the controller sends no request at all: no probe,
// no discovery, no watch renewal, although the discovery interval (the
// period of the polling this replaced) is a second here; generic roots (a
// bare pod, an owner no adapter declares) cost nothing while quiet either.
func TestQuietControllerSendsNoRequests(t *testing.T) {
	c, err := env.StartControllerWith(harness.ControllerOptions{DiscoveryInterval: time.Second}, apps.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	ns := env.NewNamespace(t, "q", true)
	env.MustApply(t, ns, harness.DeploymentChain("llama", digest))
	// Generic roots too: a bare pod, and pods of an operator no adapter
	// declares (its kind not served here: an owner as the reference names it).
	env.MustApply(t, ns, `
apiVersion: v1
kind: Pod
metadata:
  name: sg-leader
  ownerReferences: [{apiVersion: serving.example.com/v1, kind: ServingGroup, name: sg, uid: 5d1c6c2e-0f3b-4c1e-9d7a-2b8e4f6a1c3d, controller: true}]
spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: notebook}
spec: {containers: [{name: sglang, image: "lmsysorg/sglang:v0.4.6"}]}
`)
	waitDocument(t, ns, "llama", digest)
	for key, gk := range map[string]schema.GroupKind{"sg": {Group: "serving.example.com", Kind: "ServingGroup"}, "notebook": {Kind: "Pod"}} {
		require.Eventually(t, func() bool {
			return env.Client.Get(context.Background(), harness.AIBOMKey(ns, gk, key), &v1alpha1.AIBOM{}) == nil
		}, eventually, tick, "the generic root %s/%s has its AIBOM", gk.Kind, key)
	}
	require.NoError(t, c.WaitSettled(time.Second, eventually))

	before := c.Requests.Snapshot()
	time.Sleep(5 * time.Second) // the quiet period: five discovery intervals
	require.Empty(t, c.Requests.Since(before), "requests while nothing changed")
}

// A watch that stops delivering while its connection stays open (here: a
// proxy that swallows the Deployment watch's events) is caught by its
// progress deadline: the controller stops it, its informer resumes from
// its last resource version, and the change made meanwhile reaches the
// AIBOM. No periodic re-verification is involved (it runs hourly here).
func TestSilentlyStoppedWatchIsRestarted(t *testing.T) {
	proxy := newBlackholeProxy(t, env.Config)
	c, err := env.StartControllerWith(harness.ControllerOptions{Config: proxy.Config(), WatchProgressDeadline: 3 * time.Second}, apps.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	ns := env.NewNamespace(t, "bh", true)
	env.MustApply(t, ns, harness.DeploymentChain("llama", digest))
	waitDocument(t, ns, "llama", "Qwen/Qwen2.5-0.5B")

	restarts := harness.MetricValue("aibom_watch_restarts_total", map[string]string{"resource": "deployments"})
	require.Eventually(t, func() bool { return proxy.Blackhole("deployments") > 0 }, eventually, 10*time.Millisecond,
		"no open Deployment watch to blackhole")
	// The change the blackholed watch swallows.
	d := &unstructuredDeployment{}
	require.NoError(t, env.Client.Patch(context.Background(), d.named(ns, "llama"), client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/args/1","value":"Qwen/Qwen2.5-7B-Instruct"}]`))))

	waitDocument(t, ns, "llama", "Qwen/Qwen2.5-7B-Instruct")
	require.Greater(t, harness.MetricValue("aibom_watch_restarts_total", map[string]string{"resource": "deployments"}), restarts)
	require.Eventually(t, func() bool { return proxy.ended.Load() > 0 }, eventually, tick,
		"the controller closed the blackholed watch")
}

// Opting a namespace in fills the caches with its objects and reports its
// workloads as at a cold start; opting it out deletes its AIBOMs and empties
// the caches of it. Before it opts in, the caches hold nothing of it.
func TestCachesFollowOptIn(t *testing.T) {
	c, err := env.StartControllerWith(harness.ControllerOptions{}, apps.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	in := env.NewNamespace(t, "in", true)
	out := env.NewNamespace(t, "out", false)
	env.MustApply(t, in, harness.DeploymentChain("llama", digest))
	env.MustApply(t, out, harness.DeploymentChain("qwen", digest))
	env.MustApply(t, out, harness.DeploymentChain("mistral", digest))
	waitDocument(t, in, "llama", digest)

	kinds := []string{"Deployment.apps", "ReplicaSet.apps", "Pod"}
	cached := func(ns string) map[string]int {
		got := c.Supervisor.CachedObjects(ns)
		for k, v := range got {
			if v == 0 {
				delete(got, k)
			}
		}
		return got
	}
	require.Equal(t, map[string]int{kinds[0]: 1, kinds[1]: 1, kinds[2]: 1}, cached(in))
	require.Empty(t, cached(out), "objects of a namespace that did not opt in are not cached")

	// Opt in: every workload reported, with its running digest, and one
	// namespace-scoped list per kind, no new watch.
	before := c.Requests.Snapshot()
	setOptIn(t, out, true)
	waitDocument(t, out, "qwen", digest)
	waitDocument(t, out, "mistral", digest)
	require.Equal(t, map[string]int{kinds[0]: 2, kinds[1]: 2, kinds[2]: 2}, cached(out))
	reads := c.Requests.Since(before)
	for key, n := range reads {
		verb, _, _ := strings.Cut(key, " ")
		require.NotEqual(t, "WATCH", verb, "opting in opened a watch: %v", reads)
		if verb == "GET" {
			require.LessOrEqual(t, n, 1, "more than one list of a kind when opting in: %v", reads)
		}
	}
	t.Logf("requests when opting in: %v", reads)

	// Opt out: its AIBOMs go, and so do its cached objects.
	setOptIn(t, out, false)
	require.Eventually(t, func() bool { return aibomsIn(t, out) == 0 }, eventually, tick)
	require.Empty(t, cached(out), "objects of a namespace that opted out are still cached")
	require.Equal(t, map[string]int{kinds[0]: 1, kinds[1]: 1, kinds[2]: 1}, cached(in), "the other namespace's cache is untouched")

	// A change in the opted-out namespace reaches no cache either.
	env.MustApply(t, out, harness.DeploymentChain("phi", digest))
	time.Sleep(time.Second)
	require.Empty(t, cached(out))
	require.Zero(t, aibomsIn(t, out))
}

func setOptIn(t *testing.T, ns string, on bool) {
	t.Helper()
	var n corev1.Namespace
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, &n))
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if on {
		n.Labels[graph.OptInLabel] = "true"
	} else {
		delete(n.Labels, graph.OptInLabel)
	}
	require.NoError(t, env.Client.Update(context.Background(), &n))
}

// unstructuredDeployment names a Deployment for a patch.
type unstructuredDeployment struct{}

func (unstructuredDeployment) named(ns, name string) client.Object {
	d := &appsv1.Deployment{}
	d.Namespace, d.Name = ns, name
	return d
}
