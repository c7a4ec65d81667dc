package graph

import (
	"context"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MemoryStore is a Store over objects held in memory: the command line's
// offline scan reads manifests through it, so that it gets exactly the
// answers the informer caches would give. Pods must be
// *unstructured.Unstructured for their status to reach digest resolution.
// An object that is an Inflater is held in its smaller form: whole-object
// reads (Get, ControlledBy, InNamespace) return what Inflate gives, a new
// object each time, and metadata reads (MetadataReader, InNamespaceMetadata)
// the held object, as the controller's caches do with compact objects.
type MemoryStore struct {
	byName     map[memKey]client.Object
	byOwnerUID map[types.UID][]client.Object
	all        []client.Object
}

type memKey struct {
	gk              schema.GroupKind
	namespace, name string
}

// NewMemoryStore indexes objects by kind and name and by controller UID.
// Each object must carry its apiVersion and kind.
func NewMemoryStore(objs []client.Object) *MemoryStore {
	s := &MemoryStore{byName: map[memKey]client.Object{}, byOwnerUID: map[types.UID][]client.Object{}}
	for _, o := range objs {
		gk := o.GetObjectKind().GroupVersionKind().GroupKind()
		s.byName[memKey{gk, o.GetNamespace(), o.GetName()}] = o
		if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
			s.byOwnerUID[ref.UID] = append(s.byOwnerUID[ref.UID], o)
		}
		s.all = append(s.all, o)
	}
	sort.SliceStable(s.all, func(i, j int) bool {
		if s.all[i].GetNamespace() != s.all[j].GetNamespace() {
			return s.all[i].GetNamespace() < s.all[j].GetNamespace()
		}
		return s.all[i].GetName() < s.all[j].GetName()
	})
	return s
}

// Inflater is an object held in a smaller form than its whole (its
// metadata, say, and the rest encoded): Inflate returns the whole object, a
// new one on every call.
type Inflater interface {
	client.Object
	Inflate() (client.Object, error)
}

func inflate(o client.Object) (client.Object, error) {
	if i, ok := o.(Inflater); ok {
		return i.Inflate()
	}
	return o, nil
}

func inflateAll(objs []client.Object) ([]client.Object, error) {
	for i, o := range objs {
		full, err := inflate(o)
		if err != nil {
			return nil, err
		}
		objs[i] = full
	}
	return objs, nil
}

// Get implements Store.
func (s *MemoryStore) Get(ctx context.Context, e Entry, namespace, name string) (client.Object, error) {
	o, err := s.GetMetadata(ctx, e, namespace, name)
	if err != nil {
		return nil, err
	}
	return inflate(o)
}

// GetMetadata implements MetadataReader: the object as held.
func (s *MemoryStore) GetMetadata(_ context.Context, e Entry, namespace, name string) (client.Object, error) {
	if o, ok := s.byName[memKey{e.GroupKind(), namespace, name}]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: e.Group, Resource: e.Resource}, name)
}

// ControlledBy implements Store.
func (s *MemoryStore) ControlledBy(ctx context.Context, e Entry, namespace string, uid types.UID) ([]client.Object, error) {
	out, _ := s.ControlledByMetadata(ctx, e, namespace, uid)
	return inflateAll(out)
}

// ControlledByMetadata implements MetadataReader: the objects as held.
func (s *MemoryStore) ControlledByMetadata(_ context.Context, e Entry, namespace string, uid types.UID) ([]client.Object, error) {
	var out []client.Object
	for _, o := range s.byOwnerUID[uid] {
		if o.GetNamespace() == namespace && o.GetObjectKind().GroupVersionKind().GroupKind() == e.GroupKind() {
			out = append(out, o)
		}
	}
	return out, nil
}

// InNamespace implements Store; namespace "" means every namespace.
func (s *MemoryStore) InNamespace(ctx context.Context, e Entry, namespace string) ([]client.Object, error) {
	out, _ := s.InNamespaceMetadata(ctx, e, namespace)
	return inflateAll(out)
}

// InNamespaceMetadata is InNamespace for the objects as held: a pass over
// every object of a kind that reads only their metadata (the walk) does not
// inflate them all at once.
func (s *MemoryStore) InNamespaceMetadata(_ context.Context, e Entry, namespace string) ([]client.Object, error) {
	var out []client.Object
	for _, o := range s.all {
		if (namespace == "" || o.GetNamespace() == namespace) && o.GetObjectKind().GroupVersionKind().GroupKind() == e.GroupKind() {
			out = append(out, o)
		}
	}
	return out, nil
}
