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

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, e Entry, namespace, name string) (client.Object, error) {
	if o, ok := s.byName[memKey{e.GroupKind(), namespace, name}]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: e.Group, Resource: e.Resource}, name)
}

// ControlledBy implements Store.
func (s *MemoryStore) ControlledBy(_ context.Context, e Entry, namespace string, uid types.UID) ([]client.Object, error) {
	var out []client.Object
	for _, o := range s.byOwnerUID[uid] {
		if o.GetNamespace() == namespace && o.GetObjectKind().GroupVersionKind().GroupKind() == e.GroupKind() {
			out = append(out, o)
		}
	}
	return out, nil
}

// InNamespace implements Store; namespace "" means every namespace.
func (s *MemoryStore) InNamespace(_ context.Context, e Entry, namespace string) ([]client.Object, error) {
	var out []client.Object
	for _, o := range s.all {
		if (namespace == "" || o.GetNamespace() == namespace) && o.GetObjectKind().GroupVersionKind().GroupKind() == e.GroupKind() {
			out = append(out, o)
		}
	}
	return out, nil
}
