// Package coretest holds the ownership fixtures the core's tests share: a
// registry of test kinds, a world of objects with real-looking UIDs and a
// store over the fake client that counts its reads. Tests only.
package coretest

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
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// TestAdapter declares kinds and scrapes nothing: the walk and the closure
// only read declarations.
type TestAdapter struct {
	AdapterName  string
	AdapterKinds []adapter.Kind
}

func (a TestAdapter) Name() string          { return a.AdapterName }
func (a TestAdapter) Kinds() []adapter.Kind { return a.AdapterKinds }
func (a TestAdapter) Scrape(context.Context, *unstructured.Unstructured) (adapter.Findings, error) {
	return adapter.Findings{}, nil
}

func Kind(group, k, resource, version string, role adapter.Role) adapter.Kind {
	return adapter.Kind{Group: group, Kind: k, Resource: resource, Versions: []string{version}, Role: role}
}

// Kinds of the unit fixtures: the apps chain, Pod, and an operator with a
// tracked root (Widget) and a walk-only intermediate (Gear) read as
// unstructured.
var (
	WidgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	GearGVK   = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gear"}
	SecretGVK = schema.GroupVersionKind{Group: "other.io", Version: "v1", Kind: "Vault"}
)

func TestRegistry(t testing.TB) *graph.Registry {
	t.Helper()
	reg, err := graph.NewRegistry(
		TestAdapter{AdapterName: "apps", AdapterKinds: []adapter.Kind{
			Kind("apps", "Deployment", "deployments", "v1", adapter.RoleTracked),
			Kind("apps", "StatefulSet", "statefulsets", "v1", adapter.RoleTracked),
			Kind("apps", "ReplicaSet", "replicasets", "v1", adapter.RoleWalkOnly),
			Kind("", "Pod", "pods", "v1", adapter.RoleWalkOnly),
		}},
		TestAdapter{AdapterName: "example", AdapterKinds: []adapter.Kind{
			Kind("example.com", "Widget", "widgets", "v1", adapter.RoleTracked),
			Kind("example.com", "Gear", "gears", "v1", adapter.RoleWalkOnly),
			Kind("other.io", "Vault", "vaults", "v1", adapter.RoleWalkOnly),
		}},
	)
	require.NoError(t, err)
	return reg
}

// World builds ownership fixtures with real-looking UIDs.
type World struct {
	Objs []client.Object
	n    int
}

const Ns = "ns"

func (w *World) Add(gvk schema.GroupVersionKind, name string, owner client.Object) client.Object {
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
	obj.SetNamespace(Ns)
	obj.SetName(name)
	obj.SetUID(types.UID(fmt.Sprintf("uid-%s-%d", name, w.n)))
	if owner != nil {
		SetController(obj, owner)
	}
	w.Objs = append(w.Objs, obj)
	return obj
}

func SetController(obj, owner client.Object) {
	gvk := owner.GetObjectKind().GroupVersionKind()
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
}

var (
	DeployGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")
	StsGVK    = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	RsGVK     = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	PodGVK    = corev1.SchemeGroupVersion.WithKind("Pod")
)

func TestScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	for _, gvk := range []schema.GroupVersionKind{WidgetGVK, GearGVK, SecretGVK} {
		s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
		list := gvk
		list.Kind += "List"
		s.AddKnownTypeWithName(list, &unstructured.UnstructuredList{})
	}
	return s
}

// CountingReader counts reads so tests can assert what the walk costs.
type CountingReader struct {
	client.Reader
	Gets, Lists int
}

func (c *CountingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.Gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *CountingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.Lists++
	return c.Reader.List(ctx, list, opts...)
}

// fakeStore builds a fake client holding the world's objects, indexed like
// the manager's cache, with optional interceptors for failures.
func (w *World) Store(t testing.TB, reg *graph.Registry, funcs *interceptor.Funcs) (*CountingReader, graph.Store) {
	t.Helper()
	scheme := TestScheme()
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, e := range reg.Entries() {
		mapper.Add(e.GVK(), meta.RESTScopeNamespace)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(w.Objs...)
	for _, e := range reg.Entries() {
		b = b.WithIndex(graph.NewObject(e), graph.ControllerUIDIndex, graph.ControllerUID)
	}
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	r := &CountingReader{Reader: b.Build()}
	return r, graph.ReaderStore{Reader: r}
}

// Names returns the owned objects and the pods of a closure, by name.
func Names(d graph.Descendants) (owned []string, pods []string) {
	for _, p := range d.Pods {
		pods = append(pods, p.GetName())
	}
	return d.Owned(), pods
}
