// Package manifest loads Kubernetes manifests (multi-document YAML or JSON,
// kind: List too) as unstructured objects and applies them to an API server
// parent-first, filling in the UID of ownerReferences that name their owner by
// kind and name only, and writing a "status" block through the status
// subresource the way the owning controller (or a kubelet) would.
package manifest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Load reads every object from files and directories (*.yaml, *.yml, *.json,
// in lexical order). Errors name the file and the document's first line.
func Load(paths ...string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := Decode(f, data)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Decode splits a multi-document stream into objects; name is used in
// errors.
func Decode(name string, data []byte) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	line := 1
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		start := line
		line += bytes.Count(doc, []byte("\n"))
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, start, err)
		}
		if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s:%d: object without apiVersion or kind", name, start)
		}
		if obj.IsList() {
			list, err := obj.ToList()
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, start, err)
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		out = append(out, obj)
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
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
