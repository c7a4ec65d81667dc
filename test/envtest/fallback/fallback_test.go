// Package fallback tests the get/list-only fallback for walk-only kinds
// (seed Design 005 §5: Grove kinds are granted get and list, never watch)
// against a real API server. The controller runs as the shipped
// ServiceAccount, bound to the shipped ClusterRole with the grove.io rule cut
// down to get and list: the Grove kinds are read live, a Dynamo graph on the
// Grove path still gets its worker pod's digest, no Grove kind is ever
// watched, and a root reconcile lists each Grove kind at most once.
package fallback

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/watch"
	"github.com/aibom-dev/aibom/test/envtest/harness"
	"github.com/aibom-dev/aibom/test/envtest/rbac"
)

var env *harness.Env

const (
	eventually = 30 * time.Second
	tick       = 100 * time.Millisecond
	groveGroup = "grove.io"
)

var groveResources = []string{"podcliquesets", "podcliquescalinggroups", "podcliques"}

func TestMain(m *testing.M) {
	var err error
	env, err = harness.StartEnv("test/crds/dynamo/v1beta1", "test/crds/grove")
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// --- the controller, as a ServiceAccount with a cut-down ClusterRole ---

// requests counts the controller's requests by verb (LIST and GET told
// apart, WATCH separate) and resource.
type requests struct {
	mu     sync.Mutex
	counts map[string]int
}

func (r *requests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		r.record(req)
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// record keys a request as "VERB resource", VERB one of GET, LIST, WATCH,
// POST, ...: /apis/g/v/namespaces/ns/res is a LIST, .../res/name a GET.
func (r *requests) record(req *http.Request) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) > 0 && parts[0] == "api":
		parts = parts[min(2, len(parts)):]
	case len(parts) > 0 && parts[0] == "apis":
		parts = parts[min(3, len(parts)):]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	verb, resource := req.Method, ""
	if len(parts) > 0 {
		resource = parts[0]
	}
	if req.Method == http.MethodGet {
		switch {
		case req.URL.Query().Get("watch") == "true":
			verb = "WATCH"
		case len(parts) == 1:
			verb = "LIST"
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[verb+" "+resource]++
}

func (r *requests) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

type controller struct {
	sup      *watch.Supervisor
	requests *requests
	stop     func()
}

// installRole creates the shipped RBAC with the grove.io rule's verbs
// replaced (or the rule removed, for no verbs), bound to a ServiceAccount of
// its own, and returns a config impersonating it.
func installRole(t *testing.T, suffix string, groveVerbs ...string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	shipped, err := rbac.Load()
	require.NoError(t, err)
	role := shipped.ClusterRole.DeepCopy()
	role.ResourceVersion = ""
	role.Name = "aibom-fallback-" + suffix
	found := false
	var rules []rbacv1.PolicyRule
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, groveGroup) {
			found = true
			if len(groveVerbs) == 0 {
				continue
			}
			r.Verbs = groveVerbs
		}
		rules = append(rules, r)
	}
	require.True(t, found, "the shipped ClusterRole has no grove.io rule")
	role.Rules = rules
	require.NoError(t, env.Client.Create(ctx, role))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "aibom-system-" + suffix}}
	require.NoError(t, env.Client.Create(ctx, ns))
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "aibom-controller"}}
	require.NoError(t, env.Client.Create(ctx, sa))
	user := "system:serviceaccount:" + ns.Name + ":" + sa.Name
	require.NoError(t, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns.Name, Name: sa.Name}},
	}))
	// RBAC reaches the authorizer through its informers: wait for it.
	for _, check := range []struct {
		verb string
		want bool
	}{{"list", slices.Contains(groveVerbs, "list")}, {"watch", slices.Contains(groveVerbs, "watch")}, {"get", slices.Contains(groveVerbs, "get")}} {
		require.Eventually(t, func() bool {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               user,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: check.verb, Group: groveGroup, Resource: "podcliques"},
			}}
			return env.Client.Create(ctx, review) == nil && review.Status.Allowed == check.want
		}, eventually, tick)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}

// startController runs the manager with every in-tree adapter as the given
// user, counting its requests. The supervisor re-discovers every interval
// (default: hourly, so that nothing lands in a test's count).
func startController(t *testing.T, cfg *rest.Config, interval ...time.Duration) *controller {
	t.Helper()
	reg, err := graph.NewRegistry(harness.InTreeAdapters()...)
	require.NoError(t, err)
	counted := &requests{}
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = counted.wrap
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 harness.Scheme(),
		Cache:                  core.CacheOptions(cfg),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_, sup, err := core.Setup(ctx, mgr, core.Options{Registry: reg, Tool: harness.ControllerTool, MaxDocumentBytes: 512 * 1024,
		SkipNameValidation: true, DiscoveryInterval: append(interval, time.Hour)[0]})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	c := &controller{sup: sup, requests: counted, stop: func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	}}
	t.Cleanup(c.stop)
	require.Eventually(t, sup.FirstPassDone, eventually, tick)
	return c
}

// --- objects ---

const (
	image        = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"
	repo         = "nvcr.io/nvidia/ai-dynamo/vllm-runtime"
	workerDigest = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
	newDigest    = "b1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
	graphName    = "vllm-disagg"
	clique       = "vllm-disagg-0-vllmdecodeworker"
	workerPod    = "vllm-disagg-0-vllmdecodeworker-x7k2p"
)

var dgdGK = schema.GroupKind{Group: "nvidia.com", Kind: "DynamoGraphDeployment"}

// groveChain is a Dynamo graph on the Grove path: DGD -> PodCliqueSet ->
// PodClique -> Pod, parent-first.
const groveChain = `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: vllm-disagg}
spec:
  backendFramework: vllm
  components:
  - name: VllmDecodeWorker
    type: decode
    replicas: 1
    podTemplate:
      spec:
        containers:
        - {name: main, image: ` + image + `, command: [python3, -m, dynamo.vllm], args: [--model, Qwen/Qwen3-0.6B]}
---
apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: vllm-disagg
  ownerReferences: [{apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  template:
    cliques:
    - {name: vllmdecodeworker, spec: {roleName: vllmdecodeworker, replicas: 1, podSpec: {containers: [{name: main, image: ` + image + `}]}}}
---
apiVersion: grove.io/v1alpha1
kind: PodClique
metadata:
  name: ` + clique + `
  ownerReferences: [{apiVersion: grove.io/v1alpha1, kind: PodCliqueSet, name: vllm-disagg, controller: true, blockOwnerDeletion: true}]
spec:
  roleName: vllmdecodeworker
  replicas: 1
  podSpec:
    containers: [{name: main, image: ` + image + `}]
---
apiVersion: v1
kind: Pod
metadata:
  name: ` + workerPod + `
  labels: {nvidia.com/dynamo-graph-deployment-name: vllm-disagg, grove.io/podclique: ` + clique + `}
  ownerReferences: [{apiVersion: grove.io/v1alpha1, kind: PodClique, name: ` + clique + `, controller: true, blockOwnerDeletion: true}]
spec:
  containers: [{name: main, image: "` + image + `"}]
status:
  phase: Running
  containerStatuses:
  - {name: main, image: "` + image + `", imageID: "` + repo + `@sha256:` + workerDigest + `", ready: true, restartCount: 0, state: {running: {}}}
`

func newNamespace(t *testing.T) string {
	t.Helper()
	return env.NewNamespace(t, "fb", true)
}

// waitDocument waits until the AIBOM of (gk, name) is Ready and its
// document satisfies cond.
func waitDocument(t *testing.T, ns string, gk schema.GroupKind, name string, cond func(doc string) bool) *v1alpha1.AIBOM {
	t.Helper()
	key := harness.AIBOMKey(ns, gk, name)
	var got *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		if env.Client.Get(context.Background(), key, a) != nil || a.Status.Document == "" {
			return false
		}
		got = a
		return cond(a.Status.Document)
	}, eventually, tick, "AIBOM %s", key)
	return got
}

func aibomsIn(t *testing.T, ns string) []string {
	t.Helper()
	list := &v1alpha1.AIBOMList{}
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
	var out []string
	for _, a := range list.Items {
		out = append(out, a.Spec.Subject.Kind+"/"+a.Spec.Subject.Name)
	}
	return out
}

// metric reads a gauge or counter by its labels; -1 when absent.
func metric(name string, labels map[string]string) float64 {
	if v, ok := harness.LookupMetric(name, labels); ok {
		return v
	}
	return -1
}

// settle waits until no reconcile of a kind happened for a second.
func settle(t *testing.T, kind string) {
	t.Helper()
	last, since := reconciles(kind), time.Now()
	require.Eventually(t, func() bool {
		if n := reconciles(kind); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) > time.Second
	}, eventually, tick)
}

// groveRequests returns the requests on Grove kinds between two snapshots.
func groveRequests(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		for _, res := range groveResources {
			if strings.HasSuffix(k, " "+res) && v > before[k] {
				out[k] = v - before[k]
			}
		}
	}
	return out
}

// reconciles sums aibom_workload_reconcile_outcomes_total of a kind.
func reconciles(kind string) float64 {
	families, _ := metrics.Registry.Gather()
	total := 0.0
	for _, f := range families {
		if f.GetName() != "aibom_workload_reconcile_outcomes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// --- tests ---

// A namespace that opts in after its Grove chain was created: none of the
// chain's events reached the controller (the namespace was not admitted), so
// no walk ever read the Grove kinds live below this graph. Opting in must
// still give the graph its worker pod's digest: the namespace's
// re-evaluation lists each live-read kind there once before the roots are
// reconciled, so that the closure knows the Grove kinds can be controlled
// by the graph. (Runs first in the package: a later test's controller would
// have learnt that from an earlier test's objects.)
func TestGroveOptInAfterCreationRollsUpThroughLiveReads(t *testing.T) {
	c := startController(t, installRole(t, "optin", "get", "list"))
	require.Len(t, c.sup.FallbackKinds(), 3)
	ns := env.NewNamespace(t, "fb", false)
	env.MustApply(t, ns, groveChain)
	time.Sleep(time.Second) // the events of a namespace not opted in are dropped
	require.Empty(t, aibomsIn(t, ns))

	n := &corev1.Namespace{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, n))
	n.Labels = map[string]string{graph.OptInLabel: "true"}
	require.NoError(t, env.Client.Update(context.Background(), n))
	waitDocument(t, ns, dgdGK, graphName, func(doc string) bool { return strings.Contains(doc, workerDigest) })
	require.Eventually(t, func() bool { return slices.Equal(aibomsIn(t, ns), []string{"DynamoGraphDeployment/" + graphName}) }, eventually, tick)
}

// Seed §5 with the seed's own grant: grove.io get and list, no watch. The
// Grove kinds are on the live-read fallback; a DGD -> PodCliqueSet ->
// PodClique -> Pod chain rolls up onto the graph, whose document gets the
// worker pod's digest; no Grove kind is ever watched; a root reconcile lists
// each Grove kind at most once and reads no Grove object otherwise; a new
// digest on the pod reaches the graph's document (pod event, then a walk up
// through the Grove kinds: live GETs, or the root cache's resolved levels).
func TestGroveGetListOnlyRollsUpThroughLiveReads(t *testing.T) {
	c := startController(t, installRole(t, "getlist", "get", "list"))
	fallback := c.sup.FallbackKinds()
	require.ElementsMatch(t, []schema.GroupKind{
		{Group: groveGroup, Kind: "PodCliqueSet"}, {Group: groveGroup, Kind: "PodCliqueScalingGroup"}, {Group: groveGroup, Kind: "PodClique"},
	}, fallback)
	require.Eventually(t, func() bool {
		return metric("aibom_watch_fallback", map[string]string{"kind": "PodClique.grove.io"}) == 1 &&
			metric("aibom_watch_healthy", map[string]string{"kind": "PodClique.grove.io"}) == 1
	}, eventually, tick)
	require.NotEqual(t, 1.0, metric("aibom_watch_fallback", map[string]string{"kind": "DynamoGraphDeployment.nvidia.com"}), "tracked kinds are never on the fallback")

	ns := newNamespace(t)
	objs := env.MustApply(t, ns, groveChain)
	waitDocument(t, ns, dgdGK, graphName, func(doc string) bool { return strings.Contains(doc, workerDigest) })
	require.Eventually(t, func() bool { return slices.Equal(aibomsIn(t, ns), []string{"DynamoGraphDeployment/" + graphName}) }, eventually, tick)

	// One root reconcile, caused by a change of the graph alone, once the
	// reconciles of the chain's creation are over.
	settle(t, "DynamoGraphDeployment.nvidia.com")
	before, reconciled := c.requests.snapshot(), reconciles("DynamoGraphDeployment.nvidia.com")
	graph := &unstructured.Unstructured{}
	graph.SetGroupVersionKind(dgdGK.WithVersion("v1beta1"))
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(objs[0]), graph))
	graph.SetAnnotations(map[string]string{"example.com/touched": "1"})
	require.NoError(t, env.Client.Update(context.Background(), graph))
	require.Eventually(t, func() bool { return reconciles("DynamoGraphDeployment.nvidia.com") > reconciled }, eventually, tick)
	settle(t, "DynamoGraphDeployment.nvidia.com") // a further reconcile, if any, lands in the count
	after, n := c.requests.snapshot(), reconciles("DynamoGraphDeployment.nvidia.com")-reconciled
	t.Logf("%v root reconcile(s); grove requests: %v", n, groveRequests(before, after))
	for _, res := range groveResources {
		lists := after["LIST "+res] - before["LIST "+res]
		if res == "podcliquescalinggroups" {
			// No scaling group was ever controlled by anything on this
			// chain: the closure cannot reach one, and does not list.
			require.Zero(t, lists, "the closure lists %s although nothing it reaches controlled one", res)
			continue
		}
		require.Positive(t, lists, "the closure reads %s live", res)
		require.LessOrEqual(t, float64(lists), n, "at most one LIST of %s per root reconcile (%v reconciles)", res, n)
		require.Zero(t, after["GET "+res]-before["GET "+res], "no GET of %s: the closure finds children in its one list", res)
	}

	// The worker's image is updated: the pod's event walks up through live
	// GETs of the Grove kinds and re-reconciles the graph.
	pod := &unstructured.Unstructured{}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: workerPod}, pod))
	statuses, _, err := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	require.NoError(t, err)
	statuses[0].(map[string]any)["imageID"] = repo + "@sha256:" + newDigest
	require.NoError(t, unstructured.SetNestedSlice(pod.Object, statuses, "status", "containerStatuses"))
	settle(t, "DynamoGraphDeployment.nvidia.com")
	before = c.requests.snapshot()
	require.NoError(t, env.Client.Status().Update(context.Background(), pod))
	waitDocument(t, ns, dgdGK, graphName, func(doc string) bool {
		return strings.Contains(doc, newDigest) && !strings.Contains(doc, workerDigest)
	})
	settle(t, "DynamoGraphDeployment.nvidia.com")
	after = c.requests.snapshot()
	t.Logf("pod digest change: grove requests %v", groveRequests(before, after))
	// The pod's walk: at most one live GET per Grove hop, none when the
	// level was resolved before (the event mapper's root cache).
	require.LessOrEqual(t, after["GET podcliques"]-before["GET podcliques"], 1, "the pod's walk: at most one live GET per Grove hop")
	require.LessOrEqual(t, after["GET podcliquesets"]-before["GET podcliquesets"], 1, "the pod's walk: at most one live GET per Grove hop")

	// Never a watch of a Grove kind, from start to end.
	final := c.requests.snapshot()
	for _, res := range groveResources {
		require.Zero(t, final["WATCH "+res], "%s watched", res)
	}
	require.Positive(t, final["WATCH pods"], "pods are watched as always")
}

// A missing list (here: get alone) still degrades to "report as today":
// the Grove kinds are not on the fallback (the closure could not list
// them), their informers cannot list either, and they are unreadable to the
// walk and the closure alike. A Deployment controlled by a PodClique (any
// tracked kind under a Grove kind) stays a root and the miss is counted
// (aibom_rollup_unresolved_total{reason="forbidden"}); the graph is reported
// without the digest the Grove chain would give, and without the Deployment.
func TestGroveGetWithoutListReportsAsToday(t *testing.T) {
	c := startController(t, installRole(t, "getonly", "get"))
	require.Empty(t, c.sup.FallbackKinds())
	ns := newNamespace(t)
	missed := max(metric("aibom_rollup_unresolved_total", map[string]string{"kind": "PodClique.grove.io", "reason": "forbidden"}), 0)
	env.MustApply(t, ns, groveChain+`---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sidecar
  ownerReferences: [{apiVersion: grove.io/v1alpha1, kind: PodClique, name: `+clique+`, controller: true}]
spec:
  selector: {matchLabels: {app: sidecar}}
  template:
    metadata: {labels: {app: sidecar}}
    spec: {containers: [{name: main, image: "ollama/ollama:0.3.14"}]}
`)
	waitDocument(t, ns, schema.GroupKind{Group: "apps", Kind: "Deployment"}, "sidecar", func(string) bool { return true })
	require.Eventually(t, func() bool {
		return metric("aibom_rollup_unresolved_total", map[string]string{"kind": "PodClique.grove.io", "reason": "forbidden"}) > missed
	}, eventually, tick)
	a := waitDocument(t, ns, dgdGK, graphName, func(doc string) bool { return !strings.Contains(doc, workerDigest) })
	require.Zero(t, a.Status.AbsorbedCount)
	require.ElementsMatch(t, []string{"DynamoGraphDeployment/" + graphName, "Deployment/sidecar"}, aibomsIn(t, ns))
	require.Zero(t, c.requests.snapshot()["GET podcliques"], "no live read of a kind that is not on the fallback")
}

// A watch granted while running moves the Grove kinds from live reads to
// informers at the next discovery pass; the roll-up goes on.
func TestGroveWatchGrantedLaterLeavesTheFallback(t *testing.T) {
	ctx := context.Background()
	c := startController(t, installRole(t, "granted", "get", "list"), 300*time.Millisecond)
	require.Len(t, c.sup.FallbackKinds(), 3)
	ns := newNamespace(t)
	env.MustApply(t, ns, groveChain)
	waitDocument(t, ns, dgdGK, graphName, func(doc string) bool { return strings.Contains(doc, workerDigest) })

	role := &rbacv1.ClusterRole{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: "aibom-fallback-granted"}, role))
	for i, r := range role.Rules {
		if slices.Contains(r.APIGroups, groveGroup) {
			role.Rules[i].Verbs = []string{"get", "list", "watch"}
		}
	}
	require.NoError(t, env.Client.Update(ctx, role))
	require.Eventually(t, func() bool { return len(c.sup.FallbackKinds()) == 0 }, eventually, tick)
	require.Eventually(t, func() bool {
		return metric("aibom_watch_fallback", map[string]string{"kind": "PodClique.grove.io"}) == 0 &&
			c.requests.snapshot()["WATCH podcliques"] > 0
	}, eventually, tick)

	// A second chain, under the informers now.
	ns2 := newNamespace(t)
	env.MustApply(t, ns2, groveChain)
	waitDocument(t, ns2, dgdGK, graphName, func(doc string) bool { return strings.Contains(doc, workerDigest) })
}

// Issue #15 item 6: the Grove kinds on the fallback are listed only where a
// closure can reach them (below a kind that has controlled their objects):
// an owner-less Deployment (a root) and a bare pod, created and reconciled,
// issue no live request on any Grove kind.
func TestFallbackOwnerlessRootAndBarePodListNothingLive(t *testing.T) {
	c := startController(t, installRole(t, "reach", "get", "list"))
	require.Eventually(t, func() bool {
		return metric("aibom_watch_healthy", map[string]string{"kind": "PodClique.grove.io"}) == 1 &&
			metric("aibom_watch_healthy", map[string]string{"kind": "PodCliqueScalingGroup.grove.io"}) == 1 &&
			metric("aibom_watch_healthy", map[string]string{"kind": "PodCliqueSet.grove.io"}) == 1
	}, eventually, tick)
	ns := newNamespace(t)
	// A Grove graph elsewhere, so that the kinds have objects and a record.
	env.MustApply(t, newNamespace(t), groveChain)
	settle(t, "DynamoGraphDeployment")
	before := c.requests.snapshot()
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: plain}
spec:
  selector: {matchLabels: {app: plain}}
  template:
    metadata: {labels: {app: plain}}
    spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.8.5", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bare}
spec:
  containers: [{name: main, image: "`+image+`"}]
`)
	waitDocument(t, ns, schema.GroupKind{Group: "apps", Kind: "Deployment"}, "plain", func(string) bool { return true })
	settle(t, "Deployment")
	after := c.requests.snapshot()
	require.Empty(t, groveRequests(before, after), "an owner-less root and a bare pod read no Grove kind live")
}

// Issue #15 item 6: a PodClique deleted on the fallback raises no event;
// when the garbage collector then deletes its pods (background deletion),
// the graph is re-evaluated (its closure passed through that PodClique) and
// the pods' digests leave its document.
func TestFallbackDeletedPodCliquesPodsLeaveTheGraphDocument(t *testing.T) {
	startController(t, installRole(t, "gone", "get", "list"))
	ns := newNamespace(t)
	env.MustApply(t, ns, groveChain)
	waitDocument(t, ns, dgdGK, graphName, func(doc string) bool { return strings.Contains(doc, workerDigest) })
	settle(t, "DynamoGraphDeployment")

	pc := &metav1.PartialObjectMetadata{}
	pc.SetGroupVersionKind(schema.GroupVersionKind{Group: groveGroup, Version: "v1alpha1", Kind: "PodClique"})
	pc.SetNamespace(ns)
	pc.SetName(clique)
	require.NoError(t, env.Client.Delete(context.Background(), pc, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	// What the garbage collector does next (envtest runs none).
	require.NoError(t, env.Client.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workerPod}}))
	waitDocument(t, ns, dgdGK, graphName, func(doc string) bool { return !strings.Contains(doc, workerDigest) })
}
