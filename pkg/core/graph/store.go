package graph

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// ControllerUIDIndex is the name of the cache index that maps an object to
// the UID of its controller owner. The closure is a lookup in it.
const ControllerUIDIndex = "aibom.dev/controller-uid"

// ControllerUID is the index function behind ControllerUIDIndex.
func ControllerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// ErrKindNotReady is returned by the supervisor's Store for a kind whose CRD
// is absent or whose cache has not synced yet. The walk treats it like an
// absent kind: the workload is reported as today.
var ErrKindNotReady = errors.New("kind not served or its cache not synced")

// ErrKindNotSynced is the ErrKindNotReady of a kind the cluster serves and
// the controller may read, whose cache has not synced yet. Tracked means
// registered, not synced (seed §1): a walk that meets such a kind does not
// decide (see ReasonNotSynced).
var ErrKindNotSynced = fmt.Errorf("%w: registered kind's cache not synced yet", ErrKindNotReady)

// Store reads objects of registered kinds for the walk, the closure and the
// reconciler.
type Store interface {
	// Get returns one object of a registered kind.
	Get(ctx context.Context, e Entry, namespace, name string) (client.Object, error)
	// ControlledBy returns the objects of a kind in a namespace whose
	// controller ownerReference carries the given UID.
	ControlledBy(ctx context.Context, e Entry, namespace string, uid types.UID) ([]client.Object, error)
	// InNamespace returns every object of a kind in a namespace.
	InNamespace(ctx context.Context, e Entry, namespace string) ([]client.Object, error)
}

// MetadataReader is implemented by a Store that can return an object's
// metadata alone for less than the whole object (the Supervisor: its caches
// hold the kinds read whole compact, and a whole object is decoded on every
// read). The walk and the closure find owners and tracked descendants
// through it, since they read only kind, name, UID and owner references.
// The objects it returns carry their kind's group, version and kind; they
// are a reader's own, as a Get's are, and may be of another type.
type MetadataReader interface {
	// GetMetadata is Get for the object's metadata.
	GetMetadata(ctx context.Context, e Entry, namespace, name string) (client.Object, error)
	// ControlledByMetadata is ControlledBy for the objects' metadata.
	ControlledByMetadata(ctx context.Context, e Entry, namespace string, uid types.UID) ([]client.Object, error)
}

// GetMetadata reads an object for its metadata: through the store's
// MetadataReader if it has one, else with Get.
func GetMetadata(ctx context.Context, s Store, e Entry, namespace, name string) (client.Object, error) {
	if m, ok := s.(MetadataReader); ok {
		return m.GetMetadata(ctx, e, namespace, name)
	}
	return s.Get(ctx, e, namespace, name)
}

// ControlledByMetadata reads the objects a controller owns for their
// metadata: through the store's MetadataReader if it has one, else with
// ControlledBy.
func ControlledByMetadata(ctx context.Context, s Store, e Entry, namespace string, uid types.UID) ([]client.Object, error) {
	if m, ok := s.(MetadataReader); ok {
		return m.ControlledByMetadata(ctx, e, namespace, uid)
	}
	return s.ControlledBy(ctx, e, namespace, uid)
}

// NamespaceMetadataLister is implemented by a Store that can list a kind's
// objects for their metadata alone (the MemoryStore: objects it holds in a
// smaller form are not inflated; the Supervisor: its caches' objects). The
// objects are the store's own, not copies: callers read them and must not
// change them.
type NamespaceMetadataLister interface {
	InNamespaceMetadata(ctx context.Context, e Entry, namespace string) ([]client.Object, error)
}

// InNamespaceMetadata lists a kind's objects for their metadata: through
// the store's NamespaceMetadataLister if it has one, else with InNamespace.
func InNamespaceMetadata(ctx context.Context, s Store, e Entry, namespace string) ([]client.Object, error) {
	if m, ok := s.(NamespaceMetadataLister); ok {
		return m.InNamespaceMetadata(ctx, e, namespace)
	}
	return s.InNamespace(ctx, e, namespace)
}

// ControllerKindHints is implemented by a Store that knows which kinds of
// controller the objects of a kind can have (the Supervisor records them as
// objects enter its caches). The closure skips a kind whose objects cannot be
// controlled by the parent's kind instead of querying it for every node.
type ControllerKindHints interface {
	// MayBeControlledBy is false only when no object of kind child can have
	// a controller of kind owner; true when unsure.
	MayBeControlledBy(child Entry, owner schema.GroupKind) bool
}

// NeedsFullObject reports whether the core reads a kind's whole object
// (tracked kinds, to scrape them; Pods, for their status; kinds no adapter
// declares, whose topmost object is scraped as a generic root) rather than its
// metadata alone.
func NeedsFullObject(e Entry) bool {
	return e.Role == adapter.RoleTracked || e.Role == adapter.RoleReferenced || e.GroupKind() == PodGroupKind || e.Generic()
}

// NewObject returns an empty object of the form the core reads a kind in:
// unstructured for full objects, metadata-only otherwise.
func NewObject(e Entry) client.Object {
	if NeedsFullObject(e) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(e.GVK())
		return u
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(e.GVK())
	return m
}

// NewList returns an empty list of the form the core reads a kind in.
func NewList(e Entry) client.ObjectList {
	gvk := e.GVK()
	gvk.Kind += "List"
	if NeedsFullObject(e) {
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(gvk)
		return u
	}
	m := &metav1.PartialObjectMetadataList{}
	m.SetGroupVersionKind(gvk)
	return m
}

// ReaderStore is a Store over a controller-runtime reader (the manager's
// cache, or a fake client in unit tests) that has ControllerUIDIndex on every
// registered kind.
type ReaderStore struct {
	Reader client.Reader
}

// Get implements Store.
func (s ReaderStore) Get(ctx context.Context, e Entry, namespace, name string) (client.Object, error) {
	obj := NewObject(e)
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// ControlledBy implements Store.
func (s ReaderStore) ControlledBy(ctx context.Context, e Entry, namespace string, uid types.UID) ([]client.Object, error) {
	list := NewList(e)
	if err := s.Reader.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{ControllerUIDIndex: string(uid)}); err != nil {
		return nil, err
	}
	return listObjects(list), nil
}

func listObjects(list client.ObjectList) []client.Object {
	switch l := list.(type) {
	case *unstructured.UnstructuredList:
		out := make([]client.Object, len(l.Items))
		for i := range l.Items {
			out[i] = &l.Items[i]
		}
		return out
	case *metav1.PartialObjectMetadataList:
		out := make([]client.Object, len(l.Items))
		for i := range l.Items {
			out[i] = &l.Items[i]
		}
		return out
	}
	return nil
}

// InNamespace implements Store.
func (s ReaderStore) InNamespace(ctx context.Context, e Entry, namespace string) ([]client.Object, error) {
	list := NewList(e)
	if err := s.Reader.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	return listObjects(list), nil
}
