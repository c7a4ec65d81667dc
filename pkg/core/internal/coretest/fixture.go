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
	"sigs.k8s.io/yaml"

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

// EntryOf returns the registry's entry of a kind, failing the test without one.
func EntryOf(t *testing.T, reg *graph.Registry, gvk schema.GroupVersionKind) graph.Entry {
	t.Helper()
	e, ok := reg.Lookup(gvk.GroupKind())
	require.True(t, ok, gvk.String())
	return e
}

// A pod as the API server returns it after kubectl apply: spec, labels,
// annotations, managed fields and a full status.
const FullPodYAML = `
apiVersion: v1
kind: Pod
metadata:
  name: llama-7d9f8c6b5-x2x9z
  namespace: ns
  uid: 0b8f1c9e-2d3a-4e5f-8a7b-1c2d3e4f5a6b
  resourceVersion: "4711"
  generation: 1
  creationTimestamp: "2026-11-29T10:00:00Z"
  generateName: llama-7d9f8c6b5-
  labels: {app: llama, pod-template-hash: 7d9f8c6b5}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Pod"}'
    model.aibom.dev/name: meta-llama/Llama-3.1-8B-Instruct
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: llama-7d9f8c6b5, uid: 5c1f0e2a-0000-4000-8000-000000000001, controller: true, blockOwnerDeletion: true}
  finalizers: [example.com/keep]
  managedFields:
  - {manager: kube-controller-manager, operation: Update, apiVersion: v1, time: "2026-11-29T10:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {}}}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.3
    args: [--model, meta-llama/Llama-3.1-8B-Instruct]
    env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}]
  volumes: [{name: cache, emptyDir: {}}]
status:
  phase: Running
  podIP: 10.0.0.7
  conditions: [{type: Ready, status: "True"}]
  initContainerStatuses:
  - {name: fetch, image: busybox:1.36, imageID: docker.io/library/busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111, ready: true, restartCount: 0, state: {terminated: {exitCode: 0}}}
  containerStatuses:
  - {name: vllm, image: vllm/vllm-openai:v0.6.3, imageID: docker.io/vllm/vllm-openai@sha256:2222222222222222222222222222222222222222222222222222222222222222, ready: true, restartCount: 2, started: true, state: {running: {startedAt: "2026-11-29T10:01:00Z"}}}
`

// DecodeYAML decodes one YAML object, failing the test on an error.
func DecodeYAML(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

// CountingStore counts the reads the walk and the closure make through a
// Store, passing its live-read and controller-kind answers through.
type CountingStore struct {
	graph.Store
	Gets, Lists int
}

func (c *CountingStore) Get(ctx context.Context, e graph.Entry, namespace, name string) (client.Object, error) {
	c.Gets++
	return c.Store.Get(ctx, e, namespace, name)
}

// ReadsLive passes the store's answer through (LiveReads).
func (c *CountingStore) ReadsLive(e graph.Entry) bool {
	l, ok := c.Store.(graph.LiveReads)
	return ok && l.ReadsLive(e)
}

// MayBeControlledBy passes the store's hints through (ControllerKindHints).
func (c *CountingStore) MayBeControlledBy(child graph.Entry, owner schema.GroupKind) bool {
	if h, ok := c.Store.(graph.ControllerKindHints); ok {
		return h.MayBeControlledBy(child, owner)
	}
	return true
}

func (c *CountingStore) ControlledBy(ctx context.Context, e graph.Entry, namespace string, uid types.UID) ([]client.Object, error) {
	c.Lists++
	return c.Store.ControlledBy(ctx, e, namespace, uid)
}

// KeptPodYAML is what the pod transform keeps of FullPodYAML.
const KeptPodYAML = `
apiVersion: v1
kind: Pod
metadata:
  name: llama-7d9f8c6b5-x2x9z
  namespace: ns
  uid: 0b8f1c9e-2d3a-4e5f-8a7b-1c2d3e4f5a6b
  resourceVersion: "4711"
  generation: 1
  creationTimestamp: "2026-11-29T10:00:00Z"
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: llama-7d9f8c6b5, uid: 5c1f0e2a-0000-4000-8000-000000000001, controller: true, blockOwnerDeletion: true}
status:
  initContainerStatuses:
  - {name: fetch, image: busybox:1.36, imageID: docker.io/library/busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111}
  containerStatuses:
  - {name: vllm, image: vllm/vllm-openai:v0.6.3, imageID: docker.io/vllm/vllm-openai@sha256:2222222222222222222222222222222222222222222222222222222222222222}
`
