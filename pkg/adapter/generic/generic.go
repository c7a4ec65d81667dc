// Package generic reads an object of a kind no adapter knows: the pod
// templates, pod specs and containers anywhere in its spec, through the
// shared pod-template scraper, each finding located at its exact field.
//
// The core uses it for generic roots (the topmost controller owner of a kind
// no adapter declares, and Pods nobody controls), and aibom scan for custom
// resources it has no adapter for.
package generic

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Bounds of the search for pod specs in an object of an unknown kind: a spec
// is attacker-shaped input.
const (
	// MaxDepth is the deepest map or list level searched below spec.
	MaxDepth = 12
	// MaxNodes is the most maps and lists visited in one object.
	MaxNodes = 20000
)

// Scrape reads obj, an object of any kind, as unstructured JSON. A Pod's
// spec is its pod spec; for every other kind, every pod template
// ({metadata, spec: {containers}}) and pod spec ({containers}) found under
// spec is read, in a deterministic order (map keys sorted). An object with no
// pod spec gives empty findings, not an error.
func Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	var out adapter.Findings
	if obj == nil || obj.Object == nil {
		return out, nil
	}
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return out, nil
	}
	if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Pod" {
		f, err := podtemplate.ScrapePodSpec(spec, "spec", podtemplate.Options{WorkloadAnnotations: obj.GetAnnotations()})
		if err != nil {
			return adapter.Findings{}, err
		}
		return f, nil
	}
	w := walker{annotations: obj.GetAnnotations()}
	if err := w.visit(spec, "spec", 0, &out); err != nil {
		return adapter.Findings{}, err
	}
	return out, nil
}

type walker struct {
	annotations map[string]string
	nodes       int
}

func (w *walker) visit(v any, path string, depth int, out *adapter.Findings) error {
	if depth > MaxDepth {
		return nil
	}
	w.nodes++
	if w.nodes > MaxNodes {
		return fmt.Errorf("%s: more than %d fields searched for pod templates", path, MaxNodes)
	}
	switch t := v.(type) {
	case map[string]any:
		if isPodSpec(t) {
			f, err := podtemplate.ScrapePodSpec(t, path, podtemplate.Options{WorkloadAnnotations: w.annotations})
			if err != nil {
				return err
			}
			podtemplate.MergeFindings(out, f)
			return nil
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := w.visit(t[k], joinPath(path, k), depth+1, out); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range t {
			if err := w.visit(e, fmt.Sprintf("%s[%d]", path, i), depth+1, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// isPodSpec reports whether m is shaped like a pod spec: a list of
// containers, each a map with an image.
func isPodSpec(m map[string]any) bool {
	list, ok := m["containers"].([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, c := range list {
		cm, ok := c.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := cm["image"].(string); !ok {
			return false
		}
	}
	return true
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + key + "]"
	}
	return path + "." + key
}
