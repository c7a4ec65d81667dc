package core

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// testAdapter declares kinds and scrapes nothing: the walk and the closure
// only read declarations.
type testAdapter struct {
	name  string
	kinds []adapter.Kind
}

func (a testAdapter) Name() string          { return a.name }
func (a testAdapter) Kinds() []adapter.Kind { return a.kinds }
func (a testAdapter) Scrape(context.Context, *unstructured.Unstructured) (adapter.Findings, error) {
	return adapter.Findings{}, nil
}

func kind(group, k, resource, version string, role adapter.Role) adapter.Kind {
	return adapter.Kind{Group: group, Kind: k, Resource: resource, Versions: []string{version}, Role: role}
}

// Kinds of the unit fixtures: the apps chain, Pod, and an operator with a
// tracked root (Widget) and a walk-only intermediate (Gear) read as
// unstructured.
var (
	widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	gearGVK   = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gear"}
	secretGVK = schema.GroupVersionKind{Group: "other.io", Version: "v1", Kind: "Vault"}
)

func testRegistry(t testing.TB) *Registry {
	t.Helper()
	reg, err := NewRegistry(
		testAdapter{name: "apps", kinds: []adapter.Kind{
			kind("apps", "Deployment", "deployments", "v1", adapter.RoleTracked),
			kind("apps", "StatefulSet", "statefulsets", "v1", adapter.RoleTracked),
			kind("apps", "ReplicaSet", "replicasets", "v1", adapter.RoleWalkOnly),
			kind("", "Pod", "pods", "v1", adapter.RoleWalkOnly),
		}},
		testAdapter{name: "example", kinds: []adapter.Kind{
			kind("example.com", "Widget", "widgets", "v1", adapter.RoleTracked),
			kind("example.com", "Gear", "gears", "v1", adapter.RoleWalkOnly),
			kind("other.io", "Vault", "vaults", "v1", adapter.RoleWalkOnly),
		}},
	)
	require.NoError(t, err)
	return reg
}

// world builds ownership fixtures with real-looking UIDs.
type world struct {
	objs []client.Object
	n    int
}

const ns = "ns"

func (w *world) add(gvk schema.GroupVersionKind, name string, owner client.Object) client.Object {
	w.n++
	var obj client.Object
	switch gvk.Kind {
	case "Deployment":
		obj = &appsv1.Deployment{}
	case "StatefulSet":
		obj = &appsv1.StatefulSet{}
	case "ReplicaSet":
		obj = &appsv1.ReplicaSet{}
	case "Pod":
		obj = &corev1.Pod{}
	default:
		u := &unstructured.Unstructured{}
		obj = u
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetUID(types.UID(fmt.Sprintf("uid-%s-%d", name, w.n)))
	if owner != nil {
		setController(obj, owner)
	}
	w.objs = append(w.objs, obj)
	return obj
}

func setController(obj, owner client.Object) {
	gvk := owner.GetObjectKind().GroupVersionKind()
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
}

var (
	deployGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")
	stsGVK    = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	rsGVK     = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	podGVK    = corev1.SchemeGroupVersion.WithKind("Pod")
)

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	for _, gvk := range []schema.GroupVersionKind{widgetGVK, gearGVK, secretGVK} {
		s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
		list := gvk
		list.Kind += "List"
		s.AddKnownTypeWithName(list, &unstructured.UnstructuredList{})
	}
	return s
}

// countingReader counts reads so tests can assert what the walk costs.
type countingReader struct {
	client.Reader
	gets, lists int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.lists++
	return c.Reader.List(ctx, list, opts...)
}

// fakeStore builds a fake client holding the world's objects, indexed like
// the manager's cache, with optional interceptors for failures.
func (w *world) store(t testing.TB, reg *Registry, funcs *interceptor.Funcs) (*countingReader, Store) {
	t.Helper()
	scheme := testScheme()
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, e := range reg.Entries() {
		mapper.Add(e.GVK(), meta.RESTScopeNamespace)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(w.objs...)
	for _, e := range reg.Entries() {
		b = b.WithIndex(NewObject(e), ControllerUIDIndex, ControllerUID)
	}
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	r := &countingReader{Reader: b.Build()}
	return r, ReaderStore{Reader: r}
}
