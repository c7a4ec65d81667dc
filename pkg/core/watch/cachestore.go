package watch

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/compact"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// controllerIndex is the index of every watched kind's informer store that
// maps "namespace/controller UID" to the objects that controller owns: the
// closure's lookup. One key per object (controller-runtime's field indexes
// keep a second, cluster-wide key per object, which nothing here asks for).
const controllerIndex = "aibom.dev/namespaced-controller-uid"

// controllerIndexFunc is the index function of controllerIndex.
func controllerIndexFunc(obj any) ([]string, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
		return []string{o.GetNamespace() + "/" + string(ref.UID)}, nil
	}
	return nil, nil
}

// compactKind reports whether a kind's cache holds compact.Objects: every
// kind the core reads whole (tracked and referenced kinds, and pods with
// the few fields TransformPod keeps). Walk-only kinds are cached as
// metadata already.
func compactKind(e graph.Entry) bool {
	return graph.NeedsFullObject(e)
}

// cacheStore is the graph.Store of one watched kind: it reads the kind's
// informer store directly, as controller-runtime's cache reader would, and
// returns every object in the form the core reads it in (graph.NewObject):
// a compact.Object decoded into a new *unstructured.Unstructured, any other
// object deep-copied. Every object carries the kind's group, version and
// kind, as the cache reader sets them.
type cacheStore struct {
	gvk     schema.GroupVersionKind
	indexer toolscache.Indexer
}

// Get implements graph.Store.
func (c cacheStore) Get(_ context.Context, _ graph.Entry, namespace, name string) (client.Object, error) {
	item, err := c.lookup(namespace, name)
	if err != nil {
		return nil, err
	}
	return c.readable(item)
}

// getMetadata is Get for the object's metadata (graph.MetadataReader): a
// compact object's metadata is copied, its JSON not decoded.
func (c cacheStore) getMetadata(namespace, name string) (client.Object, error) {
	item, err := c.lookup(namespace, name)
	if err != nil {
		return nil, err
	}
	return c.metadata(item)
}

func (c cacheStore) lookup(namespace, name string) (any, error) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	item, exists, err := c.indexer.GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: c.gvk.Group, Resource: c.gvk.Kind}, name)
	}
	return item, nil
}

// ControlledBy implements graph.Store.
func (c cacheStore) ControlledBy(_ context.Context, _ graph.Entry, namespace string, uid types.UID) ([]client.Object, error) {
	items, err := c.controlledBy(namespace, uid)
	if err != nil {
		return nil, err
	}
	return c.all(items, c.readable)
}

// controlledByMetadata is ControlledBy for the objects' metadata.
func (c cacheStore) controlledByMetadata(namespace string, uid types.UID) ([]client.Object, error) {
	items, err := c.controlledBy(namespace, uid)
	if err != nil {
		return nil, err
	}
	return c.all(items, c.metadata)
}

func (c cacheStore) controlledBy(namespace string, uid types.UID) ([]any, error) {
	if namespace != metav1.NamespaceAll {
		return c.indexer.ByIndex(controllerIndex, namespace+"/"+string(uid))
	}
	// Every namespace: not a lookup the core makes (a closure stays in its
	// root's namespace), answered by a scan.
	var out []any
	for _, item := range c.indexer.List() {
		if o, ok := item.(metav1.Object); ok {
			if ref := metav1.GetControllerOfNoCopy(o); ref != nil && ref.UID == uid {
				out = append(out, item)
			}
		}
	}
	return out, nil
}

// InNamespace implements graph.Store.
func (c cacheStore) InNamespace(_ context.Context, _ graph.Entry, namespace string) ([]client.Object, error) {
	items, err := c.inNamespace(namespace)
	if err != nil {
		return nil, err
	}
	return c.all(items, c.readable)
}

// cached returns the cached objects of a namespace (every namespace for
// metav1.NamespaceAll) as they are in the store, without a copy: for the
// event handlers (a replay), which read metadata only.
func (c cacheStore) cached(namespace string) ([]client.Object, error) {
	items, err := c.inNamespace(namespace)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		if o, ok := item.(client.Object); ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// inNamespace returns the store's items of a namespace, or every item for
// metav1.NamespaceAll.
func (c cacheStore) inNamespace(namespace string) ([]any, error) {
	if namespace == metav1.NamespaceAll {
		return c.indexer.List(), nil
	}
	return c.indexer.ByIndex(toolscache.NamespaceIndex, namespace)
}

func (c cacheStore) all(items []any, read func(any) (client.Object, error)) ([]client.Object, error) {
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		obj, err := read(item)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// metadata returns a reader's own copy of a cached object's metadata: a
// compact object's as a PartialObjectMetadata, any other object whole.
func (c cacheStore) metadata(item any) (client.Object, error) {
	o, ok := item.(*compact.Object)
	if !ok {
		return c.readable(item)
	}
	m := &metav1.PartialObjectMetadata{ObjectMeta: *o.ObjectMeta.DeepCopy()}
	m.SetGroupVersionKind(c.gvk)
	return m, nil
}

// readable returns a reader's own copy of a cached object.
func (c cacheStore) readable(item any) (client.Object, error) {
	var out client.Object
	switch o := item.(type) {
	case *compact.Object:
		u, err := o.Unstructured()
		if err != nil {
			return nil, err
		}
		out = u
	case runtime.Object:
		cp, ok := o.DeepCopyObject().(client.Object)
		if !ok {
			return nil, fmt.Errorf("cache contained %T, which is not an object", item)
		}
		out = cp
	default:
		return nil, fmt.Errorf("cache contained %T, which is not an object", item)
	}
	out.GetObjectKind().SetGroupVersionKind(c.gvk)
	return out, nil
}
