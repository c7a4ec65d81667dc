// Package manifest loads Kubernetes manifests (multi-document YAML or JSON,
// kind: List too) as unstructured objects and applies them to an API server
// parent-first, filling in the UID of ownerReferences that name their owner by
// kind and name only, and writing a "status" block through the status
// subresource the way the owning controller (or a kubelet) would.
package manifest

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Load reads every object from files and directories (*.yaml, *.yml, *.json,
// in lexical order). Errors name the file and line.
func Load(paths ...string) ([]*unstructured.Unstructured, error) {
	sources, err := LoadSources(paths...)
	if err != nil {
		return nil, err
	}
	return objects(sources), nil
}

// Decode splits a multi-document stream into objects; name is used in
// errors.
func Decode(name string, data []byte) ([]*unstructured.Unstructured, error) {
	sources, err := DecodeSources(name, data)
	if err != nil {
		return nil, err
	}
	return objects(sources), nil
}

func objects(sources []Source) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(sources))
	for i, s := range sources {
		out[i] = s.Object
	}
	return out
}

type objectKey struct {
	group, kind, namespace, name string
}

// Apply creates the objects in order (owners must come before their
// children), resolving ownerReference UIDs against objects created earlier in
// the same call or already in the cluster, then writes each object's "status"
// block through the status subresource. It returns the created objects.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	uids := map[objectKey]types.UID{}
	var created []*unstructured.Unstructured
	for _, in := range objs {
		obj := in.DeepCopy()
		status, hasStatus := obj.Object["status"]
		delete(obj.Object, "status")
		refs := obj.GetOwnerReferences()
		for i := range refs {
			if refs[i].UID != "" {
				continue
			}
			gv, err := schema.ParseGroupVersion(refs[i].APIVersion)
			if err != nil {
				return created, fmt.Errorf("%s %s: ownerReference apiVersion: %w", obj.GetKind(), obj.GetName(), err)
			}
			key := objectKey{gv.Group, refs[i].Kind, obj.GetNamespace(), refs[i].Name}
			uid, ok := uids[key]
			if !ok {
				owner := &unstructured.Unstructured{}
				owner.SetAPIVersion(refs[i].APIVersion)
				owner.SetKind(refs[i].Kind)
				if err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: refs[i].Name}, owner); err != nil {
					return created, fmt.Errorf("%s %s: owner %s %s: %w", obj.GetKind(), obj.GetName(), refs[i].Kind, refs[i].Name, err)
				}
				uid = owner.GetUID()
			}
			refs[i].UID = uid
		}
		obj.SetOwnerReferences(refs)
		if err := c.Create(ctx, obj); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				return created, fmt.Errorf("create %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return created, err
			}
		}
		if hasStatus {
			obj.Object["status"] = status
			if err := c.Status().Update(ctx, obj); err != nil {
				return created, fmt.Errorf("write status of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			}
		}
		gv := obj.GroupVersionKind()
		uids[objectKey{gv.Group, gv.Kind, obj.GetNamespace(), obj.GetName()}] = obj.GetUID()
		created = append(created, obj)
	}
	return created, nil
}
