package graph

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LastAppliedAnnotation is the annotation kubectl apply keeps a full copy of
// the object in. No one reads it, and it often doubles an object's size.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// TransformMetadata drops managed fields and the last-applied-configuration
// annotation from any object; anything that is not an object is returned
// unchanged.
func TransformMetadata(in any) (any, error) {
	switch o := in.(type) {
	case *metav1.PartialObjectMetadata:
		if o == nil {
			return in, nil
		}
		o.ManagedFields = nil
		if _, ok := o.Annotations[LastAppliedAnnotation]; ok {
			delete(o.Annotations, LastAppliedAnnotation)
			if len(o.Annotations) == 0 {
				o.Annotations = nil
			}
		}
		return o, nil
	case *unstructured.Unstructured:
		if o == nil || o.Object == nil {
			return in, nil
		}
		md, ok := o.Object["metadata"].(map[string]any)
		if !ok {
			return o, nil
		}
		delete(md, "managedFields")
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, LastAppliedAnnotation)
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
		return o, nil
	}
	// Another object type (a typed object in tests): managed fields only.
	return stripManagedFields(in)
}

func stripManagedFields(in any) (any, error) {
	if v := reflect.ValueOf(in); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return in, nil
	}
	if obj, ok := in.(metav1.Object); ok && obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	return in, nil
}
