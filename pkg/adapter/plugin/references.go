package plugin

import (
	"context"
	"errors"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// offeredResolver is the plugin side of reference resolution: it answers
// from what the host sent, and notes what the host did not send.
type offeredResolver struct {
	resolves, final bool
	offered         map[adapter.Reference]wireReference

	mu      sync.Mutex
	missing []adapter.Reference
}

func newOfferedResolver(req *scrapeRequest) *offeredResolver {
	r := &offeredResolver{resolves: req.ResolvesReferences, final: req.Final, offered: map[adapter.Reference]wireReference{}}
	for _, w := range req.References {
		r.offered[w.Reference] = w
	}
	return r
}

func (r *offeredResolver) Resolve(_ context.Context, ref adapter.Reference) (*unstructured.Unstructured, error) {
	if w, ok := r.offered[ref]; ok {
		if w.Unresolved != "" {
			var err error
			if w.Message != "" {
				err = errors.New(w.Message)
			}
			return nil, &adapter.ReferenceError{Reference: ref, Reason: w.Unresolved, Err: err}
		}
		return adapter.ReferencedView(&unstructured.Unstructured{Object: w.Object}), nil
	}
	if r.resolves && !r.final {
		r.mu.Lock()
		if !slices.Contains(r.missing, ref) {
			r.missing = append(r.missing, ref)
		}
		r.mu.Unlock()
	}
	return nil, &adapter.ReferenceError{Reference: ref, Reason: adapter.ReasonUnavailable}
}

func (r *offeredResolver) needs() []adapter.Reference {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.missing)
}

// resolveNeeds resolves, with the host's resolver (the context's), the
// references the plugin asked for, and adds them to the request.
func resolveNeeds(ctx context.Context, req *scrapeRequest, needs []adapter.Reference) {
	resolver := adapter.ResolverFrom(ctx)
	for _, ref := range needs {
		if slices.ContainsFunc(req.References, func(w wireReference) bool { return w.Reference == ref }) {
			continue
		}
		w := wireReference{Reference: ref}
		obj, err := resolver.Resolve(ctx, ref)
		if err != nil {
			w.Unresolved = adapter.UnresolvedReason(err)
			var re *adapter.ReferenceError
			if errors.As(err, &re) && re.Err != nil {
				w.Message = re.Err.Error()
			}
		} else {
			w.Object = adapter.ReferencedView(obj).Object
		}
		req.References = append(req.References, w)
	}
}
