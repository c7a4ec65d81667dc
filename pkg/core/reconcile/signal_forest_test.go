package reconcile

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// labelSignal scrapes an AI signal (a vLLM runtime) from any tracked object
// labelled ai=yes, and nothing from the others.
type labelSignal struct {
	name  string
	kinds []adapter.Kind
}

func (a labelSignal) Name() string          { return a.name }
func (a labelSignal) Kinds() []adapter.Kind { return a.kinds }
func (a labelSignal) Scrape(_ context.Context, u *unstructured.Unstructured) (adapter.Findings, error) {
	if u.GetLabels()["ai"] != "yes" {
		return adapter.Findings{}, nil
	}
	return adapter.Findings{Runtimes: []adapter.Runtime{{Name: "vllm", Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceWorkloadAnnotation, Locator: "metadata.labels.ai"}}}}, nil
}

var thingGVK = schema.GroupVersionKind{Group: "unknown.io", Version: "v1", Kind: "Thing"} // no adapter declares it

// signalForest is a random ownership forest (no damage: the graph's own
// conservation tests cover that) in which tracked workloads carry an AI
// signal of their own at random (a label the adapter reads), and pods run
// an AI image (vLLM) or not.
func signalForest(rng *rand.Rand) []client.Object {
	kinds := []schema.GroupVersionKind{coretest.WidgetGVK, coretest.DeployGVK, coretest.StsGVK, coretest.RsGVK,
		coretest.GearGVK, coretest.PodGVK, coretest.PodGVK, thingGVK}
	var objs []client.Object
	n := 2 + rng.Intn(25)
	for i := 0; i < n; i++ {
		gvk := kinds[rng.Intn(len(kinds))]
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(coretest.Ns)
		u.SetName(fmt.Sprintf("o%d", i))
		u.SetUID(types.UID(fmt.Sprintf("uid-o%d", i)))
		if len(objs) > 0 && rng.Float64() < 0.75 {
			owner := objs[rng.Intn(len(objs))]
			if owner.GetObjectKind().GroupVersionKind().Kind != "Pod" || rng.Float64() < 0.2 {
				coretest.SetController(u, owner)
			}
		}
		switch {
		case gvk == coretest.PodGVK:
			image := "busybox:1.36"
			if rng.Float64() < 0.4 {
				image = "vllm/vllm-openai:v0.6.3"
			}
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
			if err != nil {
				panic(err)
			}
			u.Object["spec"] = m["spec"]
		case rng.Float64() < 0.3:
			u.SetLabels(map[string]string{"ai": "yes"})
		}
		objs = append(objs, u)
	}
	return objs
}

// #27: conservation of AI workloads with --report=ai over random forests
// that include unknown owner kinds and bare pods: every AIBOM is of a root
// with an AI signal somewhere in what it absorbs (its own findings, an
// absorbed workload's, or a pod's), every AI pod is in exactly one AIBOM,
// and so is every tracked workload with a signal of its own: a signal is
// never hidden under an owner that has none.
func TestAIWorkloadsAreReportedOnceOverRandomForests(t *testing.T) {
	ctx := context.Background()
	reg, err := graph.NewRegistry(
		labelSignal{name: "apps", kinds: []adapter.Kind{
			coretest.Kind("apps", "Deployment", "deployments", "v1", adapter.RoleTracked),
			coretest.Kind("apps", "StatefulSet", "statefulsets", "v1", adapter.RoleTracked),
			coretest.Kind("apps", "ReplicaSet", "replicasets", "v1", adapter.RoleWalkOnly)}},
		labelSignal{name: "example", kinds: []adapter.Kind{
			coretest.Kind("example.com", "Widget", "widgets", "v1", adapter.RoleTracked),
			coretest.Kind("example.com", "Gear", "gears", "v1", adapter.RoleWalkOnly)}},
	)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(2727))
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	// reported: objects with a signal (each in exactly one AIBOM);
	// unreported: tracked workloads in no AIBOM (no signal at or below the
	// root they belong to), which the gating must produce too.
	reported, unreported := 0, 0
	for forest := 0; forest < 300; forest++ {
		objs := signalForest(rng)
		store := graph.NewMemoryStore(objs)
		c := fake.NewClientBuilder().WithScheme(scheme).
			WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: coretest.Ns, Labels: map[string]string{graph.OptInLabel: "true"}}}).
			WithStatusSubresource(&v1alpha1.AIBOM{}).Build()
		r := &Reconciler{Registry: reg, Store: store, Reader: c, Writer: c, Tool: document.Tool{Version: "test"}}
		m := &EventMapper{Registry: reg, Store: store, Reader: c, Roots: NewRootCache()}
		q := newTestQueue(t)
		r.Mapper, r.Queue = m, q
		for _, o := range objs {
			e, ok := reg.Lookup(o.GetObjectKind().GroupVersionKind().GroupKind())
			if ok {
				m.OnAdd(ctx, e, o, q)
			}
		}
		m.enqueueGenericCandidates(ctx, coretest.Ns, q)
		for q.Len() > 0 {
			req, _ := q.Get()
			if !m.Process(ctx, req, q) {
				_, err := r.Reconcile(ctx, req)
				require.NoError(t, err, "forest %d: %s", forest, req)
			}
			q.Done(req)
		}

		var aiboms v1alpha1.AIBOMList
		require.NoError(t, c.List(ctx, &aiboms))
		closure := graph.Closure{Registry: reg, Store: store}
		byUID := map[types.UID]client.Object{}
		for _, o := range objs {
			byUID[o.GetUID()] = o
		}
		in := map[types.UID]int{} // AIBOMs an object is in
		for _, a := range aiboms.Items {
			subj := a.Spec.Subject
			root, ok := byUID[types.UID(subj.UID)]
			if !ok {
				// A generic root as its reference names it (never read).
				stub := &metav1.PartialObjectMetadata{}
				stub.SetGroupVersionKind(schema.FromAPIVersionAndKind(subj.APIVersion, subj.Kind))
				stub.SetNamespace(a.Namespace)
				stub.SetName(subj.Name)
				stub.SetUID(types.UID(subj.UID))
				root = stub
			}
			in[root.GetUID()]++
			d, err := closure.Descendants(ctx, root)
			require.NoError(t, err)
			signal := hasSignal(root)
			for _, x := range d.Tracked {
				in[x.GetUID()]++
				signal = signal || hasSignal(byUID[x.GetUID()])
			}
			for _, p := range d.Pods {
				in[p.GetUID()]++
				signal = signal || hasSignal(p)
			}
			require.True(t, signal, "forest %d: AIBOM %s of %s/%s has no AI signal anywhere below it\n%s", forest, a.Name, subj.Kind, subj.Name, describeForest(objs))
		}
		for _, o := range objs {
			if !hasSignal(o) {
				if reg.IsTracked(o.GetObjectKind().GroupVersionKind().GroupKind()) && in[o.GetUID()] == 0 {
					unreported++
				}
				continue
			}
			require.Equal(t, 1, in[o.GetUID()], "forest %d: %s %s carries an AI signal and is in %d AIBOMs\n%s",
				forest, o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), in[o.GetUID()], describeForest(objs))
			reported++
		}
	}
	require.Positive(t, reported)
	require.Positive(t, unreported, "no forest had a root without an AI signal")
	t.Logf("%d objects with a signal reported once each; %d tracked workloads without one in no AIBOM", reported, unreported)
}

// hasSignal: a pod running the vLLM image, or a tracked workload labelled
// ai=yes.
func hasSignal(o client.Object) bool {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	if u.GetKind() == "Pod" {
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
		for _, c := range containers {
			if m, ok := c.(map[string]any); ok && m["image"] == "vllm/vllm-openai:v0.6.3" {
				return true
			}
		}
		return false
	}
	return u.GetLabels()["ai"] == "yes" && u.GetKind() != "ReplicaSet" && u.GetKind() != "Gear" && u.GetKind() != "Thing"
}

func describeForest(objs []client.Object) string {
	out := ""
	for _, o := range objs {
		owner := "-"
		if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
			owner = ref.Kind + "/" + ref.Name
		}
		out += fmt.Sprintf("  %s/%s owner=%s signal=%v\n", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), owner, hasSignal(o))
	}
	return out
}
