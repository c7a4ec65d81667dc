package scale

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

func registry(t *testing.T) *graph.Registry {
	t.Helper()
	adapters, err := intree.Select("all")
	require.NoError(t, err)
	reg, err := graph.NewRegistry(adapters...)
	require.NoError(t, err)
	return reg
}

// checkChains checks each chain against the in-tree registry: the root is
// tracked and first, every object's owner comes before it and is a
// registered kind, the expected absorbed list is exactly the tracked
// descendants, and the pods run exactly the root's expected digests. With
// generic, every root is instead of a kind no adapter declares, or a Pod.
func checkChains(t *testing.T, reg *graph.Registry, load Load, generic bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range load.Chains {
		require.NotEmpty(t, c.Nodes)
		root := c.Nodes[0]
		require.Equal(t, -1, root.Parent, c.Root.Name)
		rootGK := root.Object.GroupVersionKind().GroupKind()
		if generic {
			_, registered := reg.Lookup(rootGK)
			require.True(t, rootGK == graph.PodGroupKind || !registered, "%s is declared", rootGK)
		} else {
			require.True(t, reg.IsTracked(rootGK), root.Object.GetKind())
		}
		require.Equal(t, c.Root.Name, root.Object.GetName())
		require.Equal(t, c.Root.GroupKind, root.Object.GroupVersionKind().GroupKind())
		var absorbed []string
		digests := map[string]bool{}
		for i, n := range c.Nodes {
			gk := n.Object.GroupVersionKind().GroupKind()
			id := c.Namespace + "/" + gk.String() + "/" + n.Object.GetName()
			require.False(t, seen[id], "duplicate %s", id)
			seen[id] = true
			require.Equal(t, c.Namespace, n.Object.GetNamespace())
			if i == 0 {
				if gk == graph.PodGroupKind {
					digests = podDigests(t, id, n)
				}
				continue
			}
			_, registered := reg.Lookup(gk)
			require.True(t, registered, "%s is not a registered kind", gk)
			require.GreaterOrEqual(t, n.Parent, 0, id)
			require.Less(t, n.Parent, i, "%s: owner created after it", id)
			if reg.IsTracked(gk) {
				absorbed = append(absorbed, graph.OwnedIdentity(gk, n.Object.GetName()))
			}
			if gk == graph.PodGroupKind {
				for d := range podDigests(t, id, n) {
					digests[d] = true
				}
			} else {
				require.Nil(t, n.Status, id)
			}
		}
		sort.Strings(absorbed)
		require.Equal(t, absorbed, append([]string(nil), c.Root.Absorbed...), c.Root.Name)
		var got []string
		for d := range digests {
			got = append(got, d)
		}
		sort.Strings(got)
		require.Equal(t, c.Root.Digests, got, c.Root.Name)
	}
}

// podDigests returns the digests a planned pod's status reports running.
func podDigests(t *testing.T, id string, n Node) map[string]bool {
	t.Helper()
	require.NotNil(t, n.Status, id)
	statuses := n.Status["containerStatuses"].([]any)
	require.NotEmpty(t, statuses)
	out := map[string]bool{}
	for _, s := range statuses {
		_, d, ok := digest.ParseImageID(s.(map[string]any)["imageID"].(string))
		require.True(t, ok, id)
		out[strings.TrimPrefix(d, "sha256:")] = true
	}
	return out
}

func TestPlanMixedHasEveryShapeOverEveryNamespace(t *testing.T) {
	load := PlanMixed(50, 10000)
	require.Len(t, load.Namespaces, 50)
	require.GreaterOrEqual(t, load.Objects(), 10000)
	require.Less(t, load.Objects(), 10000+20, "stops after the chain that reaches the target")
	shapes := load.RootsByShape()
	for _, s := range []string{ShapeVLLM, ShapeCronJob, ShapeNIM, ShapeLWS, ShapeDynamoDCD, ShapeGroveClique, ShapeGroveScalingGroup} {
		require.Positive(t, shapes[s], s)
	}
	kinds := load.ObjectsByKind()
	for _, k := range []string{"Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job", "CronJob", "NIMService", "LeaderWorkerSet",
		"DynamoGraphDeployment", "DynamoComponentDeployment", "PodCliqueSet", "PodClique", "PodCliqueScalingGroup"} {
		require.Positive(t, kinds[k], k)
	}
	require.Equal(t, kinds["Pod"], load.Statuses(), "every pod runs, with its digests")
	perNamespace := map[string]int{}
	for _, c := range load.Chains {
		perNamespace[c.Namespace]++
	}
	require.Len(t, perNamespace, 50)
	checkChains(t, registry(t), load, false)
	// Deterministic: the same size gives the same load.
	again := PlanMixed(50, 10000)
	require.Equal(t, len(load.Chains), len(again.Chains))
	require.Equal(t, load.Chains[17].Nodes[3].Object, again.Chains[17].Nodes[3].Object)
}

func TestPlanDeploymentsIsThePeersLoad(t *testing.T) {
	load := PlanDeployments(10, 1000)
	require.Len(t, load.Chains, 1000)
	require.Equal(t, 3000, load.Objects())
	require.Equal(t, map[string]int{"Deployment": 1000, "ReplicaSet": 1000, "Pod": 1000}, load.ObjectsByKind())
	checkChains(t, registry(t), load, false)
}

func TestPlanGenericHasOnlyRootsNoAdapterDeclares(t *testing.T) {
	load := PlanGeneric(10, 999)
	require.Len(t, load.Chains, 999)
	require.Equal(t, map[string]int{ShapeGenericPods: 333, ShapeGenericDeployment: 333, ShapeBarePod: 333}, load.RootsByShape())
	// 333 groups with 2 pods, 333 groups with a Deployment, a ReplicaSet
	// and a pod, 333 bare pods.
	require.Equal(t, map[string]int{"ServingGroup": 666, "Deployment": 333, "ReplicaSet": 333, "Pod": 333*2 + 333 + 333}, load.ObjectsByKind())
	require.Equal(t, load.ObjectsByKind()["Pod"], load.Statuses())
	checkChains(t, registry(t), load, true)
	for _, c := range load.Chains {
		if c.Shape == ShapeGenericDeployment {
			require.Equal(t, []string{graph.OwnedIdentity(schema.GroupKind{Group: "apps", Kind: "Deployment"}, c.Root.Name)}, c.Root.Absorbed)
		} else {
			require.Empty(t, c.Root.Absorbed, c.Root.Name)
		}
	}
}

func TestParseMetricsAndQuantile(t *testing.T) {
	text := `# HELP x y
# TYPE aibom_api_requests_total counter
aibom_api_requests_total{resource="aiboms",verb="POST"} 7
aibom_api_requests_total{resource="aiboms/status",verb="PATCH"} 7
aibom_api_requests_total{resource="pods",verb="WATCH"} 1
controller_runtime_reconcile_time_seconds_bucket{controller="aibom",le="0.01"} 50
controller_runtime_reconcile_time_seconds_bucket{controller="aibom",le="0.1"} 90
controller_runtime_reconcile_time_seconds_bucket{controller="aibom",le="1"} 100
controller_runtime_reconcile_time_seconds_bucket{controller="aibom",le="+Inf"} 100
controller_runtime_reconcile_time_seconds_bucket{controller="other",le="+Inf"} 3
controller_runtime_reconcile_total{controller="aibom",result="success"} 98
controller_runtime_reconcile_total{controller="aibom",result="requeue_after"} 2
weird{a="x\"y,z"} 1.5e3
`
	m, err := ParseMetrics(strings.NewReader(text))
	require.NoError(t, err)
	require.Equal(t, map[string]int{"POST aiboms": 7, "PATCH aiboms/status": 7, "WATCH pods": 1}, m.Requests())
	require.Equal(t, 100.0, m.Sum("controller_runtime_reconcile_total", controllerLabel))
	require.Equal(t, 1500.0, m.Sum("weird", map[string]string{"a": `x"y,z`}))
	h := m.Histogram(reconcileTime, controllerLabel)
	require.Len(t, h, 4)
	require.Equal(t, 0.01, Quantile(0.5, h))                           // rank 50: the top of the first bucket
	require.InDelta(t, 0.1+0.9*(95-90)/10.0, Quantile(0.95, h), 1e-12) // rank 95: inside (0.1, 1]
	require.InDelta(t, 0.1+0.9*(99-90)/10.0, Quantile(0.99, h), 1e-12)
	require.True(t, math.IsNaN(Quantile(0.5, nil)))

	later := []Bucket{{0.01, 60}, {0.1, 100}, {1, 110}, {math.Inf(1), 110}}
	d := HistogramDelta(later, h)
	require.Equal(t, []Bucket{{0.01, 10}, {0.1, 10}, {1, 10}, {math.Inf(1), 10}}, d)
	require.InDelta(t, 0.005, Quantile(0.5, d), 1e-12) // all 10 new reconciles in the first bucket

	_, err = ParseMetrics(strings.NewReader("broken{a=\"x} 1\n"))
	require.Error(t, err)
}

func TestParseProcStatus(t *testing.T) {
	hwm, rss, err := parseProcStatus("Name:\taibom-controller\nVmPeak:\t 1300000 kB\nVmHWM:\t   75000 kB\nVmRSS:\t   70000 kB\n")
	require.NoError(t, err)
	require.Equal(t, int64(75000*1024), hwm)
	require.Equal(t, int64(70000*1024), rss)
	_, _, err = parseProcStatus("Name:\tx\n")
	require.Error(t, err)
}

func TestVerdict(t *testing.T) {
	root := Root{GroupKind: schema.GroupKind{Group: "batch", Kind: "CronJob"}, Name: "w", Namespace: "ns",
		Absorbed: []string{"Deployment/a", "Job/b"}, Digests: []string{strings.Repeat("a", 64)}}
	good := func() *v1alpha1.AIBOM {
		return &v1alpha1.AIBOM{
			Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{Kind: "CronJob", Name: "w", UID: "u1"}},
			Status: v1alpha1.AIBOMStatus{
				Absorbed: []string{"Job/b", "Deployment/a"}, AbsorbedCount: 2,
				Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue}},
				Document: `{"components":[{"type":"application","name":"vllm"},` +
					`{"type":"container","name":"r","hashes":[{"alg":"SHA-256","content":"` + strings.Repeat("a", 64) + `"}]}]}`,
			},
		}
	}
	require.Empty(t, Verdict(root, "u1", good()))
	require.Contains(t, Verdict(root, "u2", good()), "subject")

	a := good()
	a.Status.Conditions[0].Status = metav1.ConditionFalse
	require.Equal(t, "not Ready", Verdict(root, "u1", a))

	a = good()
	a.Status.Absorbed, a.Status.AbsorbedCount = a.Status.Absorbed[:1], 1
	require.Contains(t, Verdict(root, "u1", a), "absorbed")

	a = good()
	a.Status.Document = `{"components":[{"type":"container","name":"r"}]}`
	require.Contains(t, Verdict(root, "u1", a), "unresolved")

	a = good()
	a.Status.Document = strings.ReplaceAll(a.Status.Document, strings.Repeat("a", 64), strings.Repeat("b", 64))
	require.Contains(t, Verdict(root, "u1", a), "digests")

	a = good()
	a.Status.Document = `{"components":[]}`
	require.Contains(t, Verdict(root, "u1", a), "no container")
}

// TestTrackerConvergesOnlyOnTheExactSet: an extra AIBOM holds convergence
// back until it is deleted.
func TestTrackerConvergesOnlyOnTheExactSet(t *testing.T) {
	load := PlanDeployments(1, 1)
	k := key{load.Chains[0].Namespace, load.Chains[0].Root.AIBOMName()}
	tr := newTracker(load, map[key]types.UID{k: "u"})
	good := &v1alpha1.AIBOM{}
	good.Namespace, good.Name = k.namespace, k.name
	good.Spec.Subject = v1alpha1.Subject{Kind: "Deployment", Name: load.Chains[0].Root.Name, UID: "u"}
	good.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue}}
	good.Status.Document = `{"components":[{"type":"container","name":"v","hashes":[{"alg":"SHA-256","content":"` + load.Chains[0].Root.Digests[0] + `"}]}]}`
	extra := &v1alpha1.AIBOM{}
	extra.Namespace, extra.Name = k.namespace, "deployment-other-12345678"

	tr.observe(extra)
	tr.observe(good)
	ok, wrong, extras, _ := tr.state(1)
	require.False(t, ok)
	require.Equal(t, 0, wrong)
	require.Equal(t, 1, extras)
	tr.forget(extra)
	ok, _, _, _ = tr.state(1)
	require.True(t, ok)
	select {
	case <-tr.done:
	default:
		t.Fatal("tracker did not signal convergence")
	}
	tr.forget(good)
	ok, wrong, _, reasons := tr.state(1)
	require.False(t, ok)
	require.Equal(t, 1, wrong)
	require.Contains(t, reasons[0], "deleted")
}

func TestIsWrite(t *testing.T) {
	for k, want := range map[string]bool{
		"POST aiboms": true, "PATCH aiboms/status": true, "DELETE aiboms": true, "PUT aiboms": true,
		"GET pods": false, "WATCH pods": false, "GET discovery": false,
		"POST selfsubjectaccessreviews": false, // a question, not a write
	} {
		require.Equal(t, want, IsWrite(k), k)
	}
}
