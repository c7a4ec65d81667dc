package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// declaredRegistry is testRegistry with the apps kinds declaring their pod
// owners, as adapters/apps does; Widget declares none.
func declaredRegistry(t testing.TB) *graph.Registry {
	t.Helper()
	deploy := coretest.Kind("apps", "Deployment", "deployments", "v1", adapter.RoleTracked)
	deploy.PodOwners = []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}
	sts := coretest.Kind("apps", "StatefulSet", "statefulsets", "v1", adapter.RoleTracked)
	sts.PodOwners = []schema.GroupKind{{Group: "apps", Kind: "StatefulSet"}}
	reg, err := graph.NewRegistry(coretest.TestAdapter{AdapterName: "apps", AdapterKinds: []adapter.Kind{deploy, sts, coretest.Kind("apps", "ReplicaSet", "replicasets", "v1", adapter.RoleWalkOnly), coretest.Kind("", "Pod", "pods", "v1", adapter.RoleWalkOnly)}}, coretest.TestAdapter{AdapterName: "example", AdapterKinds: []adapter.Kind{coretest.Kind("example.com", "Widget", "widgets", "v1", adapter.RoleTracked), coretest.Kind("example.com", "Gear", "gears", "v1", adapter.RoleWalkOnly)}})
	require.NoError(t, err)
	return reg
}

// A pod counts only through the path its nearest tracked ancestor declares:
// pods whose controller reference names a Deployment directly are refused
// (and reported), pods of a ReplicaSet count, a kind that declares nothing
// accepts any path, and the LeaderWorkerSet shape (a leader pod controlling
// the workers' StatefulSet) keeps working. A refused pod still connects what
// it controls, as the upward walk sees it.
func TestClosureAttributesPodsOnlyThroughDeclaredOwners(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "graph", nil)
	w.Add(coretest.PodGVK, "graph-gear-a", w.Add(coretest.GearGVK, "graph-gear", widget))
	deploy := w.Add(coretest.DeployGVK, "graph-web", widget)
	rs := w.Add(coretest.RsGVK, "graph-web-1", deploy)
	w.Add(coretest.PodGVK, "graph-web-1-a", rs)
	w.Add(coretest.PodGVK, "graph-web-1-b", rs)
	rogue := w.Add(coretest.PodGVK, "rogue-x", deploy)
	w.Add(coretest.PodGVK, "rogue-y", deploy)
	w.Add(coretest.StsGVK, "rogue-sts", rogue)
	leaders := w.Add(coretest.StsGVK, "lws", widget)
	leader := w.Add(coretest.PodGVK, "lws-0", leaders)
	w.Add(coretest.PodGVK, "lws-0-1", w.Add(coretest.StsGVK, "lws-0", leader))

	reg := declaredRegistry(t)
	_, store := w.Store(t, reg, nil)
	d, err := graph.Closure{Registry: reg, Store: store}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	owned, pods := coretest.Names(d)
	require.Equal(t, []string{"Deployment.apps/graph-web", "StatefulSet.apps/lws", "StatefulSet.apps/lws-0", "StatefulSet.apps/rogue-sts"}, owned)
	require.Equal(t, []string{"graph-gear-a", "graph-web-1-a", "graph-web-1-b", "lws-0", "lws-0-1"}, pods)
	deployGK := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	require.Equal(t, []graph.UnfitPod{
		{Name: "rogue-x", Controller: deployGK, Workload: "Deployment/graph-web", WorkloadKind: deployGK},
		{Name: "rogue-y", Controller: deployGK, Workload: "Deployment/graph-web", WorkloadKind: deployGK},
	}, d.Unfit)

	// Without declarations (testRegistry), every pod counts, as before.
	reg = coretest.TestRegistry(t)
	_, store = w.Store(t, reg, nil)
	d, err = graph.Closure{Registry: reg, Store: store}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	_, pods = coretest.Names(d)
	require.Contains(t, pods, "rogue-x")
	require.Empty(t, d.Unfit)
}

// appsObject is an unstructured apps/v1 or v1 object with a controller.
func appsObject(gvk schema.GroupVersionKind, name string, owner client.Object, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(coretest.Ns)
	u.SetName(name)
	u.SetUID(types.UID("uid-" + gvk.Kind + "-" + name))
	if owner != nil {
		coretest.SetController(u, owner)
	}
	return u
}

func runningPod(name string, owner client.Object, hex string) *unstructured.Unstructured {
	return appsObject(coretest.PodGVK, name, owner, map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": "vllm", "image": "vllm/vllm-openai:v0.6.3"}}},
		"status": map[string]any{"containerStatuses": []any{map[string]any{
			"name": "vllm", "image": "docker.io/vllm/vllm-openai:v0.6.3", "imageID": "docker.io/vllm/vllm-openai@sha256:" + hex,
		}}},
	})
}

var vllmDeploymentSpec = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
	"containers": []any{map[string]any{"name": "vllm", "image": "vllm/vllm-openai:v0.6.3"}},
}}}}

// appsReconciler reconciles objs with the real apps adapter, writing AIBOMs
// to a fake API server.
func appsReconciler(t *testing.T, extra []adapter.Adapter, objs ...client.Object) (*Reconciler, client.Client, *eventLog) {
	t.Helper()
	reg, err := graph.NewRegistry(append([]adapter.Adapter{apps.New()}, extra...)...)
	require.NoError(t, err)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: coretest.Ns, Labels: map[string]string{graph.OptInLabel: "true"}}}).
		WithStatusSubresource(&v1alpha1.AIBOM{}).Build()
	events := &eventLog{}
	return &Reconciler{
		Registry: reg, Store: graph.NewMemoryStore(objs), Reader: c, Writer: c, Recorder: events,
		Tool: document.Tool{Version: "test"}, MaxDocumentBytes: 512 << 10,
		Now:       func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		ReportAll: true, // these tests are about attribution, not about matching
	}, c, events
}

func unattributed(kind string) float64 {
	var m dto.Metric
	if err := podsUnattributed.WithLabelValues(kind).Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// Two pods controlled directly by a Deployment do not vote: the document
// still names the digest its ReplicaSets' pods run, the rogue digest is
// nowhere, the pods are counted and the Deployment gets a Warning Event.
func TestRoguePodsControlledByADeploymentDoNotVote(t *testing.T) {
	legit, rogueHex := strings.Repeat("a", 64), strings.Repeat("0", 64)
	deploy := appsObject(coretest.DeployGVK, "llama", nil, vllmDeploymentSpec)
	rs := appsObject(coretest.RsGVK, "llama-1", deploy, nil)
	objs := []client.Object{deploy, rs, runningPod("llama-1-a", rs, legit)}
	r, c, events := appsReconciler(t, nil, objs...)
	req := Request{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "llama"}
	key := client.ObjectKey{Namespace: coretest.Ns, Name: AIBOMName(coretest.DeployGVK.GroupKind(), "llama")}
	ctx := context.Background()
	_, err := r.Reconcile(ctx, req)
	require.NoError(t, err)
	before := &v1alpha1.AIBOM{}
	require.NoError(t, c.Get(ctx, key, before))
	require.Contains(t, before.Status.Document, legit)

	r.Store = graph.NewMemoryStore(append(objs, runningPod("rogue-1", deploy, rogueHex), runningPod("rogue-2", deploy, rogueHex)))
	counted := unattributed("Deployment.apps")
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	after := &v1alpha1.AIBOM{}
	require.NoError(t, c.Get(ctx, key, after))
	require.Equal(t, before.Status.Document, after.Status.Document, "rogue pods changed the document")
	require.NotContains(t, after.Status.Document, rogueHex)
	require.Equal(t, counted+2, unattributed("Deployment.apps"))
	var warned []recordedEvent
	for _, e := range events.all() {
		if e.reason == ReasonPodsNotAttributed {
			warned = append(warned, e)
		}
	}
	require.Len(t, warned, 1)
	require.Equal(t, "llama", warned[0].regarding)
	require.Equal(t, corev1.EventTypeWarning, warned[0].eventType)
	require.Contains(t, warned[0].note, "pod rogue-1 (controller Deployment.apps, under Deployment/llama)")
	require.Contains(t, warned[0].note, "pod rogue-2")
}

// The memory of the last written input hash is freed when the AIBOM goes,
// also when garbage collection removed it before the reconcile ran.
func TestLastWrittenForgottenWhenTheAIBOMIsGone(t *testing.T) {
	f := newReconcilerFixture(t, 0)
	ctx := context.Background()
	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	_, ok := f.r.written.load(f.key)
	require.True(t, ok, "the write is remembered")

	// The workload is deleted; garbage collection removes its AIBOM first.
	require.NoError(t, f.client.Delete(ctx, f.aibom(t)))
	f.r.Store = graph.NewMemoryStore(nil)
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	_, ok = f.r.written.load(f.key)
	require.False(t, ok, "the last-written entry outlived the AIBOM")
}

// A root absorbing 10,000 workloads still gets its document: the owned list
// is capped in the document and in status.absorbed, the count stays exact,
// and the AIBOM object stays well under etcd's object limit.
func TestTenThousandAbsorbedWorkloadsBuildCapped(t *testing.T) {
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(coretest.WidgetGVK)
	widget.SetNamespace(coretest.Ns)
	widget.SetName("graph")
	widget.SetUID("uid-graph")
	objs := []client.Object{widget}
	for i := range 10000 {
		objs = append(objs, appsObject(coretest.DeployGVK, fmt.Sprintf("graph-component-with-a-realistic-name-%05d", i), widget, vllmDeploymentSpec))
	}
	widgets := &scrapeFunc{scrape: func() (adapter.Findings, error) { return adapter.Findings{}, nil }}
	r, c, _ := appsReconciler(t, []adapter.Adapter{widgets}, objs...)
	ctx := context.Background()
	_, err := r.Reconcile(ctx, Request{GroupKind: coretest.WidgetGVK.GroupKind(), Namespace: coretest.Ns, Name: "graph"})
	require.NoError(t, err)

	a := &v1alpha1.AIBOM{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: coretest.Ns, Name: AIBOMName(coretest.WidgetGVK.GroupKind(), "graph")}, a))
	ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	require.Equal(t, metav1.ConditionTrue, ready.Status, ready.Message)
	require.Equal(t, 10000, a.Status.AbsorbedCount)
	require.Len(t, a.Status.Absorbed, document.MaxOwnedListed)
	require.Equal(t, "Deployment.apps/graph-component-with-a-realistic-name-00000", a.Status.Absorbed[0])
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
	require.Contains(t, a.Status.Document, `"name":"aibom.rollup.ownedCount","value":"10000"`)
	require.Contains(t, a.Status.Document, `"name":"aibom.rollup.ownedOmitted","value":"9000"`)
	whole, err := json.Marshal(a)
	require.NoError(t, err)
	require.Less(t, len(whole), 1<<20, "the AIBOM object must stay well under etcd's 1.5 MiB")
}
