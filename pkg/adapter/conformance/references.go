package conformance

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// CheckReferences is the check of the References fixtures give: a
// referenced object that disappears, is forbidden, or changes.
const CheckReferences = "References"

// ObjectResolver resolves references among in-memory objects, the way the
// controller resolves them among its caches: a namespaced kind in the
// root's Namespace only, a cluster-scoped kind (as Kinds declares it) at
// cluster scope. An object it does not hold is adapter.ReasonNotFound. Each
// lookup is recorded (Lookups).
type ObjectResolver struct {
	// Kinds are the adapter's declarations (for the referenced kinds'
	// scope).
	Kinds []adapter.Kind
	// Namespace is the root's namespace.
	Namespace string
	// Objects are the objects that exist.
	Objects []*unstructured.Unstructured
	// Fail, when set, is the reason every lookup fails with instead
	// (adapter.ReasonForbidden, ...).
	Fail string

	mu      sync.Mutex
	lookups []adapter.Reference
}

// Resolve implements adapter.Resolver.
func (r *ObjectResolver) Resolve(_ context.Context, ref adapter.Reference) (*unstructured.Unstructured, error) {
	r.mu.Lock()
	r.lookups = append(r.lookups, ref)
	r.mu.Unlock()
	if r.Fail != "" {
		return nil, &adapter.ReferenceError{Reference: ref, Reason: r.Fail}
	}
	k := slices.IndexFunc(r.Kinds, func(k adapter.Kind) bool { return k.Role == adapter.RoleReferenced && k.GroupKind() == ref.GroupKind() })
	if k < 0 {
		return nil, &adapter.ReferenceError{Reference: ref, Reason: adapter.ReasonUndeclared}
	}
	ns := r.Namespace
	if r.Kinds[k].ClusterScoped {
		ns = ""
	}
	for _, o := range r.Objects {
		if o.GroupVersionKind().GroupKind() == ref.GroupKind() && o.GetName() == ref.Name && o.GetNamespace() == ns {
			return adapter.ReferencedView(o), nil
		}
	}
	return nil, &adapter.ReferenceError{Reference: ref, Reason: adapter.ReasonNotFound}
}

// Lookups returns the references looked up so far.
func (r *ObjectResolver) Lookups() []adapter.Reference {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lookups)
}

// resolverFor returns the resolver a fixture's scrapes use: the References
// of every fixture, in the object's namespace.
func (s *suite) resolverFor(obj *unstructured.Unstructured, fail string, refs []*unstructured.Unstructured) *ObjectResolver {
	ns := ""
	if obj != nil && obj.Object != nil {
		ns, _, _ = unstructured.NestedString(obj.Object, "metadata", "namespace")
	}
	return &ObjectResolver{Kinds: s.kinds, Namespace: ns, Objects: refs, Fail: fail}
}

// allReferences lists the References of every fixture.
func (s *suite) allReferences() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, fx := range s.h.Fixtures() {
		out = append(out, fx.References...)
	}
	return out
}

// referencedKindNames lists the kinds the adapter declares as referenced.
func (s *suite) referencedKindNames() []string {
	var out []string
	for _, k := range s.kinds {
		if k.Role == adapter.RoleReferenced {
			out = append(out, k.Kind)
		}
	}
	return out
}

// checkReferences checks a fixture with References: every one of them is
// looked up by the scrape; and when they are absent, forbidden, malformed
// or their spec is emptied, the scrape still succeeds, and (absent or
// forbidden) reports at least one unresolved finding, or (emptied) finds
// something else than with them.
func (s *suite) checkReferences(t TB, fx Fixture) {
	t.Helper()
	if len(fx.References) == 0 {
		t.Logf("conformance: fixture %q gives no References; nothing to check", fx.Name)
		return
	}
	base, ok := s.scrapeOK(t, fx)
	if !ok {
		return
	}
	rec := s.resolverFor(fx.Object, "", fx.References)
	if r := s.scrapeWith(cloneObject(fx.Object), rec); r.ok() && r.err == nil {
		for _, ref := range fx.References {
			if !slices.ContainsFunc(rec.Lookups(), func(l adapter.Reference) bool {
				return l.Kind == ref.GetKind() && l.Name == ref.GetName()
			}) {
				t.Errorf("fixture %q: the scrape never looked up its reference %s/%s (lookups: %v)\n"+
					"  fix: resolve what the object names with adapter.Resolve(ctx, adapter.Reference{...}); or drop the reference from the fixture",
					fx.Name, ref.GetKind(), ref.GetName(), rec.Lookups())
			}
		}
	}
	for _, fail := range []string{adapter.ReasonNotFound, adapter.ReasonForbidden} {
		var r result
		if fail == adapter.ReasonNotFound {
			r = s.scrapeWith(cloneObject(fx.Object), s.resolverFor(fx.Object, "", nil))
		} else {
			r = s.scrapeWith(cloneObject(fx.Object), s.resolverFor(fx.Object, fail, nil))
		}
		what := fmt.Sprintf("fixture %q with its references %s", fx.Name, fail)
		switch {
		case !r.ok():
			t.Errorf("%s", s.describe(r, what))
		case r.err != nil:
			t.Errorf("%s: Scrape failed: %v\n  fix: a reference that cannot be read is a finding with confidence adapter.Unresolved, never an error", what, r.err)
		case !hasUnresolved(r.findings):
			t.Errorf("%s: no finding has confidence unresolved\n  fix: report what the reference would have told (a runtime, a model) as an adapter.Unresolved claim located at the field that names it", what)
		}
	}
	// Referenced objects of an unexpected shape (every field of their spec
	// of the wrong type) never fail the root's scrape.
	junk := make([]*unstructured.Unstructured, 0, len(fx.References))
	for _, ref := range fx.References {
		c := cloneObject(ref)
		if spec, ok := c.Object["spec"].(map[string]any); ok {
			for k := range spec {
				spec[k] = int64(7)
			}
		}
		junk = append(junk, c)
	}
	if r := s.scrapeWith(cloneObject(fx.Object), s.resolverFor(fx.Object, "", junk)); !r.ok() {
		t.Errorf("%s", s.describe(r, fmt.Sprintf("fixture %q with malformed references", fx.Name)))
	} else if r.err != nil {
		t.Errorf("fixture %q with malformed references (every spec field a number): Scrape failed: %v\n"+
			"  fix: a referenced object of an unexpected shape is unresolved (or gives fewer findings), never an error of the root", fx.Name, r.err)
	}
	emptied := make([]*unstructured.Unstructured, 0, len(fx.References))
	for _, ref := range fx.References {
		c := cloneObject(ref)
		c.Object["spec"] = map[string]any{}
		emptied = append(emptied, c)
	}
	r := s.scrapeWith(cloneObject(fx.Object), s.resolverFor(fx.Object, "", emptied))
	what := fmt.Sprintf("fixture %q with its references' spec emptied", fx.Name)
	switch {
	case !r.ok():
		t.Errorf("%s", s.describe(r, what))
	case r.err != nil:
		t.Errorf("%s: Scrape failed: %v\n  fix: a referenced object of an unexpected shape gives fewer findings, never an error", what, r.err)
	case reflect.DeepEqual(r.findings, base):
		t.Errorf("%s: the findings are the same as with them: the referenced objects' content is not read\n"+
			"  fix: read what the referenced objects declare; or drop the references from the fixture", what)
	}
}

func hasUnresolved(f adapter.Findings) bool {
	for _, r := range f.Runtimes {
		if r.Confidence == adapter.Unresolved {
			return true
		}
	}
	for _, m := range f.Models {
		if m.Confidence == adapter.Unresolved {
			return true
		}
	}
	for _, x := range f.Frameworks {
		if x.Confidence == adapter.Unresolved {
			return true
		}
	}
	for _, d := range f.Data {
		if d.Confidence == adapter.Unresolved {
			return true
		}
	}
	return false
}

// referenceLocator splits a locator of a referenced object's field,
// "<Kind>/<name>:<path>" (adapter.Reference.FieldLocator), into the kind
// and the path.
func referenceLocator(loc string) (kind, path string, ok bool) {
	head, path, ok := strings.Cut(loc, ":")
	if !ok {
		return "", "", false
	}
	kind, _, ok = strings.Cut(head, "/")
	return kind, path, ok && kind != "" && !strings.ContainsAny(kind, ".[")
}

// LoadReferences decodes every manifest a glob matches (one object each, as
// LoadFixtures does), keyed by file name without extension: the referenced
// objects to give fixtures as Fixture.References.
func LoadReferences(glob string) (map[string]*unstructured.Unstructured, error) {
	fs, err := LoadFixtures(glob, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*unstructured.Unstructured, len(fs))
	for _, f := range fs {
		out[f.Name] = f.Object
	}
	return out, nil
}

// WithReferences sets the References of the named fixtures: refs maps a
// fixture name to names of objects loaded by LoadReferences. A name that
// matches no fixture or no object is an error.
func WithReferences(fixtures []Fixture, objects map[string]*unstructured.Unstructured, refs map[string][]string) ([]Fixture, error) {
	for name, objs := range refs {
		i := slices.IndexFunc(fixtures, func(f Fixture) bool { return f.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("conformance: references for %q, which is no fixture", name)
		}
		for _, o := range objs {
			obj, ok := objects[o]
			if !ok {
				return nil, fmt.Errorf("conformance: fixture %q references %q, which is no loaded object", name, o)
			}
			fixtures[i].References = append(fixtures[i].References, obj)
		}
	}
	return fixtures, nil
}
