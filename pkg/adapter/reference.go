package adapter

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RoleReferenced marks a kind whose objects a tracked object names but does
// not own: a NIMService's NIMCache, a KServe predictor's ServingRuntime, a
// TrainJob's TrainingRuntime. Such an object is looked up by name during a
// scrape (see Resolver), never walked, never a root, never listed in
// aibom.rollup.owned. A change to it re-reconciles the roots that looked it
// up at their last reconcile.
const RoleReferenced Role = "referenced"

// Reference names an object a root refers to by name. It carries no
// namespace: a namespaced kind is always looked up in the namespace of the
// root being scraped, and a cluster-scoped kind (Kind.ClusterScoped) at
// cluster scope, so that no object can make the controller read another
// namespace's objects on its behalf.
type Reference struct {
	// Group and Kind name a kind the adapter declares with RoleReferenced.
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// Name is the referenced object's name.
	Name string `json:"name"`
	// Locator is the field of the root that names the object, e.g.
	// "spec.storage.nimCache.name". The document records it.
	Locator string `json:"locator"`
}

// GroupKind returns the reference's group and kind.
func (r Reference) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: r.Group, Kind: r.Kind}
}

func (r Reference) String() string { return r.Kind + "/" + r.Name }

// FieldLocator returns the locator of a field of the referenced object, for
// the evidence of a fact read from it: "NIMCache/llama:spec.source.hf.modelName".
func (r Reference) FieldLocator(path string) string { return r.Kind + "/" + r.Name + ":" + path }

// Reasons a reference is unresolved (ReferenceError.Reason).
const (
	// ReasonNotFound: no object of that kind and name in the root's
	// namespace (or at cluster scope).
	ReasonNotFound = "not-found"
	// ReasonForbidden: the controller may not read the kind.
	ReasonForbidden = "forbidden"
	// ReasonNotServed: the cluster does not serve the kind (no CRD), or its
	// cache has not synced.
	ReasonNotServed = "not-served"
	// ReasonUndeclared: the adapter did not declare the kind as referenced.
	ReasonUndeclared = "undeclared"
	// ReasonUnavailable: nothing resolves references in this scrape (no
	// resolver, or an out-of-process adapter whose host did not offer one).
	ReasonUnavailable = "unavailable"
)

// ReferenceError says why a reference could not be resolved. An adapter
// never returns it from Scrape: an unresolved reference is a finding with
// confidence Unresolved, and the rest of the document stands.
type ReferenceError struct {
	Reference Reference
	// Reason is one of the Reason* constants.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *ReferenceError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("reference %s (%s): %s: %v", e.Reference, e.Reference.Locator, e.Reason, e.Err)
	}
	return fmt.Sprintf("reference %s (%s): %s", e.Reference, e.Reference.Locator, e.Reason)
}

func (e *ReferenceError) Unwrap() error { return e.Err }

// UnresolvedReason returns the reason of a ReferenceError in err's chain,
// or ReasonUnavailable for any other non-nil error, and "" for nil.
func UnresolvedReason(err error) string {
	if err == nil {
		return ""
	}
	var re *ReferenceError
	if errors.As(err, &re) {
		return re.Reason
	}
	return ReasonUnavailable
}

// Resolver looks referenced objects up for one scrape. It is read-only and
// bounded to the root's namespace (or cluster scope for a cluster-scoped
// kind). The object it returns is a copy holding apiVersion, kind,
// metadata.name, metadata.namespace and spec, never status: a scraper may
// read and keep it. An object that cannot be read gives a *ReferenceError.
//
// The host records every lookup: the document lists each reference with the
// locator that named it and whether it resolved, and a later change to the
// object re-reconciles the root.
type Resolver interface {
	Resolve(ctx context.Context, ref Reference) (*unstructured.Unstructured, error)
}

type resolverKey struct{}

// WithResolver returns a context whose scrapes resolve references with r.
// The core (and aibom scan, and the plugin transport on the plugin's side)
// sets it before calling Scrape.
func WithResolver(ctx context.Context, r Resolver) context.Context {
	return context.WithValue(ctx, resolverKey{}, r)
}

// ResolverFrom returns the context's resolver, or one that fails every
// lookup with ReasonUnavailable when there is none.
func ResolverFrom(ctx context.Context) Resolver {
	if r, ok := ctx.Value(resolverKey{}).(Resolver); ok && r != nil {
		return r
	}
	return unavailableResolver{}
}

// Resolve looks a reference up with the context's resolver: what a scraper
// calls.
func Resolve(ctx context.Context, ref Reference) (*unstructured.Unstructured, error) {
	return ResolverFrom(ctx).Resolve(ctx, ref)
}

type unavailableResolver struct{}

func (unavailableResolver) Resolve(_ context.Context, ref Reference) (*unstructured.Unstructured, error) {
	return nil, &ReferenceError{Reference: ref, Reason: ReasonUnavailable}
}

// ReferencedView returns the copy of obj a Resolver hands out: apiVersion,
// kind, metadata.name, metadata.namespace and spec.
func ReferencedView(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(obj.GetAPIVersion())
	out.SetKind(obj.GetKind())
	out.SetName(obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		out.SetNamespace(ns)
	}
	if spec, ok := obj.Object["spec"]; ok {
		out.Object["spec"] = deepCopyValue(spec)
	}
	return out
}

func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopyValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopyValue(e)
		}
		return l
	default:
		return x
	}
}

// ReferencedScraper is an optional interface of an adapter that can say
// what one object of its referenced kinds defines on its own: a serving
// runtime's containers, a model catalogue entry's weights. aibom scan uses
// it for referenced objects that no root of its input refers to (a folder
// of runtime definitions), and says that nothing runs them. The controller
// never reports a referenced object on its own.
type ReferencedScraper interface {
	ScrapeReferenced(ctx context.Context, obj *unstructured.Unstructured) (Findings, error)
}
