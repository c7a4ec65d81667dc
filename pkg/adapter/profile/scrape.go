package profile

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// maxReferenceDepth bounds chains of references (a service naming a
// runtime naming a model): a profile cannot make one scrape read many
// objects.
const maxReferenceDepth = 3

// PropertyImplied prefixes the property that records why a constant was
// implied: "<adapter>.implied.<runtime>" = the rule's reason.
const PropertyImplied = "implied."

// Scrape reads one object of a tracked kind with the kind's rules: pod
// templates through the shared pod-template scraper, then commands,
// models, runtimes, data, frameworks, properties and references, in that
// order. A field of the wrong type on a selected path is an error naming
// its locator; an absent field selects nothing.
func (a *Adapter) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("%s: no object", a.name)
	}
	gvk := obj.GroupVersionKind()
	if !adapter.Tracks(a.kinds, gvk) {
		return adapter.Findings{}, fmt.Errorf("%s: %s is not a tracked kind of this adapter", a.name, gvk)
	}
	f := adapter.Findings{Scrapers: []adapter.Scraper{a.Scraper()}}
	models, reds := podtemplate.ModelsFromAnnotations(obj.GetAnnotations(), "metadata.annotations", adapter.SourceWorkloadAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)
	s := &scrape{ctx: ctx, a: a, f: &f, seen: map[string]bool{}}
	if err := s.apply(a.rules[gvk.GroupKind()], obj.Object, "", 0); err != nil {
		return adapter.Findings{}, fmt.Errorf("%s: %s %s: %w", a.name, gvk.Kind, obj.GetName(), err)
	}
	return f, nil
}

type scrape struct {
	ctx  context.Context
	a    *Adapter
	f    *adapter.Findings
	seen map[string]bool // referenced objects read in this scrape
}

// selectNodes evaluates a selection: its path, the recursion and the
// conditions.
func selectNodes(sel selection, root node) ([]node, error) {
	nodes, err := sel.path.eval(root)
	if err != nil {
		return nil, err
	}
	if sel.recurse != "" {
		frontier := nodes
		for depth := 0; depth < MaxRecurseDepth && len(frontier) > 0; depth++ {
			var next []node
			for _, n := range frontier {
				m, ok := n.value.(map[string]any)
				if !ok {
					continue
				}
				kids, err := path{{kind: segField, name: sel.recurse}, {kind: segEach}}.eval(node{value: m, locator: n.locator, wildcard: n.wildcard})
				if err != nil {
					return nil, err
				}
				next = append(next, kids...)
			}
			nodes = append(nodes, next...)
			if len(nodes) > MaxMatches {
				return nil, fmt.Errorf("%s: %w", root.locator, errTooMany)
			}
			frontier = next
		}
	}
	out := nodes[:0]
	for _, n := range nodes {
		keep, err := meets(sel.where, n, root)
		if err != nil {
			return nil, err
		}
		if keep {
			out = append(out, n)
		}
	}
	return out, nil
}

func meets(conds []condition, n, root node) (bool, error) {
	for _, c := range conds {
		from := n
		if c.fromRoot {
			from = root
		}
		vals, err := c.field.eval(from)
		if err != nil {
			return false, err
		}
		var strs []string
		for _, v := range vals {
			if s, ok := scalar(v.value); ok {
				strs = append(strs, strings.ToLower(s))
			}
		}
		switch {
		case len(c.in) > 0:
			if !slices.ContainsFunc(strs, func(s string) bool { return slices.Contains(c.in, s) }) {
				return false, nil
			}
		case len(c.notIn) > 0:
			if slices.ContainsFunc(strs, func(s string) bool { return slices.Contains(c.notIn, s) }) {
				return false, nil
			}
		case c.absent:
			if len(vals) > 0 {
				return false, nil
			}
		default:
			if len(vals) == 0 {
				return false, nil
			}
		}
	}
	return true, nil
}

// value is one string a rule read, with the locator of its field.
type value struct {
	s, locator string
}

// values returns the strings at p below n: a scalar, or each scalar of a
// list. Objects are skipped.
func values(p path, n node) ([]value, error) {
	nodes, err := p.eval(n)
	if err != nil {
		return nil, err
	}
	var out []value
	for _, v := range nodes {
		if l, ok := v.value.([]any); ok {
			for i, e := range l {
				if s, ok := scalar(e); ok && strings.TrimSpace(s) != "" {
					out = append(out, value{s: s, locator: fmt.Sprintf("%s[%d]", v.locator, i)})
				}
			}
			continue
		}
		if s, ok := scalar(v.value); ok && strings.TrimSpace(s) != "" {
			out = append(out, value{s: s, locator: v.locator})
		}
	}
	return out, nil
}

// first returns the first string at p below n, "" when p is empty or
// selects none.
func first(p path, n node) (value, error) {
	if len(p) == 0 {
		return value{}, nil
	}
	vs, err := values(p, n)
	if err != nil || len(vs) == 0 {
		return value{}, err
	}
	return vs[0], nil
}

// apply runs a kind's rules on an object. prefix is put before every
// locator: "" for the scraped object, "<Kind>/<name>:" for a referenced one.
func (s *scrape) apply(kr *kindRules, obj map[string]any, prefix string, depth int) error {
	if kr == nil {
		return nil
	}
	root := node{value: obj}
	for _, t := range kr.templates {
		if err := s.templates(t, root, prefix); err != nil {
			return err
		}
	}
	for _, c := range kr.containers {
		nodes, err := selectNodes(c.selection, root)
		if err != nil {
			return err
		}
		if len(nodes) > 0 {
			s.f.Containers = append(s.f.Containers, adapter.Container{Name: c.name, Group: c.group, ImageFromPods: true,
				Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: prefix + nodes[0].locator}})
		}
	}
	for _, r := range kr.commands {
		if err := s.each(r, root, func(v value, _ node) error {
			cf := podtemplate.ReadCommand(podtemplate.CommandInput{Command: []string{"sh", "-c", v.s}, ContainerPath: prefix + v.locator})
			cf.Containers = nil
			s.f.Merge(cf)
			return nil
		}); err != nil {
			return err
		}
	}
	for _, r := range kr.models {
		if err := s.models(r, root, prefix); err != nil {
			return err
		}
	}
	for _, r := range kr.runtimes {
		if err := s.runtimes(r, root, prefix); err != nil {
			return err
		}
	}
	for _, r := range kr.data {
		if err := s.data(r, root, prefix); err != nil {
			return err
		}
	}
	for _, r := range kr.frameworks {
		if err := s.frameworks(r, root, prefix); err != nil {
			return err
		}
	}
	for _, r := range kr.properties {
		if err := s.each(r, root, func(v value, _ node) error {
			name := s.a.name + "." + r.name
			s.f.Properties = append(s.f.Properties, adapter.Property{Name: name, Value: podtemplate.RedactInto(v.s, prefix+v.locator, s.f)})
			return nil
		}); err != nil {
			return err
		}
	}
	for _, r := range kr.refs {
		if err := s.references(r, root, prefix, depth); err != nil {
			return err
		}
	}
	return nil
}

// each calls fn for every value a field rule reads, mapped.
func (s *scrape) each(r fieldRule, root node, fn func(v value, n node) error) error {
	nodes, err := selectNodes(r.selection, root)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		var vs []value
		if r.value != "" {
			vs = []value{{s: r.value, locator: n.locator}}
		} else {
			field := r.field
			if vs, err = values(field, n); err != nil {
				return err
			}
		}
		for _, v := range vs {
			mapped, ok := r.mapValue(v.s)
			if !ok {
				continue
			}
			v.s = mapped
			if len(r.prefix) > 0 {
				p, err := first(r.prefix, n)
				if err != nil {
					return err
				}
				if p.s != "" {
					v.s = strings.TrimRight(p.s, r.separator) + r.separator + strings.TrimLeft(v.s, r.separator)
				}
			}
			if err := fn(v, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r fieldRule) mapValue(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if r.mapping == nil || r.value != "" {
		return v, true
	}
	if m, ok := r.mapping[strings.ToLower(v)]; ok {
		return m, true
	}
	if r.keepUnmapped {
		return strings.ToLower(v), true
	}
	return "", false
}

func (s *scrape) templates(t templateRule, root node, prefix string) error {
	nodes, err := selectNodes(t.selection, root)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		m, ok := n.value.(map[string]any)
		if !ok {
			return fields.TypeError(prefix+n.locator, "object", n.value)
		}
		group := t.group
		if t.byWildcard {
			group = n.wildcard
		}
		loc := prefix + n.locator
		var tf adapter.Findings
		switch t.shape {
		case ShapeTemplate:
			tf, err = podtemplate.ScrapeTemplate(m, loc, podtemplate.Options{Group: group})
		case ShapePodSpec:
			tf, err = podtemplate.ScrapePodSpec(m, loc, podtemplate.Options{Group: group})
		default:
			tf, err = podtemplate.ScrapeContainer(m, loc, podtemplate.ContainerOptions{Group: group})
		}
		if err != nil {
			return err
		}
		// An operator that picks the image itself leaves it out of the
		// spec (a Seldon Server's podSpec, a Llama Stack containerSpec):
		// the core reads that container's image and digest from the pods
		// attributed to the root, by container name. A container without
		// a name cannot be matched and is not reported; what its command
		// line and env say still counts.
		tf.Containers = slices.DeleteFunc(tf.Containers, func(c adapter.Container) bool {
			return strings.TrimSpace(c.Image) == "" && strings.TrimSpace(c.Name) == ""
		})
		for i := range tf.Containers {
			if strings.TrimSpace(tf.Containers[i].Image) == "" {
				tf.Containers[i].Image = ""
				tf.Containers[i].ImageFromPods = true
			}
		}
		podtemplate.MergeFindings(s.f, tf)
	}
	return nil
}

func (s *scrape) models(r fieldRule, root node, prefix string) error {
	return s.each(r, root, func(v value, n node) error {
		served, err := first(r.served, n)
		if err != nil {
			return err
		}
		loc, err := first(r.location, n)
		if err != nil {
			return err
		}
		version, err := first(r.version, n)
		if err != nil {
			return err
		}
		var mf adapter.Findings
		if loc.s != "" && len(r.field) > 0 {
			// The field names the model; the location is where its weights
			// are: the name as it is, the URI as its source.
			name := podtemplate.RedactInto(v.s, prefix+v.locator, &mf)
			if podtemplate.IsPlaceholder(name) {
				return nil
			}
			mf.Models = append(mf.Models, adapter.Model{Name: name, Confidence: r.confidence,
				Source:     podtemplate.RedactInto(loc.s, prefix+loc.locator, &mf),
				ServedName: podtemplate.RedactInto(served.s, prefix+served.locator, &mf),
				Evidence:   adapter.Evidence{Source: adapter.SourceCRDField, Locator: prefix + v.locator}})
		} else {
			podtemplate.ModelFromValue(v.s, r.confidence, adapter.SourceCRDField, prefix+v.locator, served.s, &mf)
		}
		baseFrom := n
		if r.baseFromRoot {
			baseFrom = root
		}
		base, err := first(r.baseModel, baseFrom)
		if err != nil {
			return err
		}
		if base.s != "" {
			var bf adapter.Findings
			// The base model as the value a model field names ("hf://org/m"
			// is "org/m").
			podtemplate.ModelFromValue(base.s, r.confidence, adapter.SourceCRDField, prefix+base.locator, "", &bf)
			for _, bm := range bf.Models {
				for i := range mf.Models {
					if mf.Models[i].BaseModel == "" && mf.Models[i].Name != bm.Name {
						mf.Models[i].BaseModel = bm.Name
					}
				}
			}
			mf.Redactions = append(mf.Redactions, bf.Redactions...)
		}
		// The model card's fields, read once for the node and given to
		// every model the value named.
		var card [3]string
		for i, p := range []path{r.task, r.architecture, r.quantization} {
			v, err := first(p, n)
			if err != nil {
				return err
			}
			if v.s != "" {
				card[i] = podtemplate.RedactInto(strings.TrimSpace(v.s), prefix+v.locator, &mf)
			}
		}
		for i := range mf.Models {
			m := &mf.Models[i]
			m.Task, m.Architecture, m.Quantization = cmp.Or(m.Task, card[0]), cmp.Or(m.Architecture, card[1]), cmp.Or(m.Quantization, card[2])
		}
		if version.s != "" {
			for i := range mf.Models {
				if mf.Models[i].Version == "" {
					mf.Models[i].Version = podtemplate.RedactInto(version.s, prefix+version.locator, &mf)
				}
			}
		}
		s.f.Merge(mf)
		return nil
	})
}

func (s *scrape) runtimes(r fieldRule, root node, prefix string) error {
	return s.each(r, root, func(v value, n node) error {
		version, err := first(r.version, n)
		if err != nil {
			return err
		}
		name := podtemplate.RedactInto(strings.ToLower(v.s), prefix+v.locator, s.f)
		if podtemplate.IsPlaceholder(v.s) {
			return nil
		}
		s.f.Runtimes = append(s.f.Runtimes, adapter.Runtime{Name: name, Platform: r.platform, Confidence: r.confidence,
			Version:  podtemplate.RedactInto(version.s, prefix+version.locator, s.f),
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: prefix + v.locator}})
		if r.value != "" {
			s.f.Properties = append(s.f.Properties, adapter.Property{Name: s.a.name + "." + PropertyImplied + name, Value: r.reason})
		}
		return nil
	})
}

func (s *scrape) frameworks(r fieldRule, root node, prefix string) error {
	return s.each(r, root, func(v value, _ node) error {
		if podtemplate.IsPlaceholder(v.s) {
			return nil
		}
		name := podtemplate.RedactInto(strings.ToLower(strings.TrimSpace(v.s)), prefix+v.locator, s.f)
		s.f.Frameworks = append(s.f.Frameworks, adapter.Framework{Name: name, Purpose: r.name, Confidence: r.confidence,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: prefix + v.locator}})
		if r.value != "" {
			s.f.Properties = append(s.f.Properties, adapter.Property{Name: s.a.name + "." + PropertyImplied + name, Value: r.reason})
		}
		return nil
	})
}

func (s *scrape) data(r fieldRule, root node, prefix string) error {
	return s.each(r, root, func(v value, _ node) error {
		s.f.Data = append(s.f.Data, adapter.Data{Name: podtemplate.RedactInto(v.s, prefix+v.locator, s.f), Kind: r.name,
			Confidence: r.confidence, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: prefix + v.locator}})
		return nil
	})
}

// references resolves each referenced name and reads the object with its
// kind's rules. An object that cannot be read is recorded as an
// unresolved model claim named after it: the rest of the document stands.
func (s *scrape) references(r refRule, root node, prefix string, depth int) error {
	nodes, err := selectNodes(r.selection, root)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		vs, err := values(r.field, n)
		if err != nil {
			return err
		}
		for _, v := range vs {
			locator := prefix + v.locator
			if depth >= maxReferenceDepth {
				continue
			}
			ref := adapter.Reference{Group: r.kind.Group, Kind: r.kind.Kind, Name: v.s, Locator: locator}
			obj, err := adapter.Resolve(s.ctx, ref)
			if r.fallback != nil && adapter.UnresolvedReason(err) == adapter.ReasonNotFound {
				ref.Group, ref.Kind = r.fallback.Group, r.fallback.Kind
				obj, err = adapter.Resolve(s.ctx, ref)
			}
			if err != nil {
				s.unresolved(r, v.s, locator, adapter.UnresolvedReason(err))
				continue
			}
			key := ref.GroupKind().String() + "/" + ref.Name
			if s.seen[key] {
				continue
			}
			s.seen[key] = true
			gk := schema.GroupKind{Group: ref.Group, Kind: ref.Kind}
			// A referenced object of an unexpected shape tells nothing: it
			// is unresolved, and never fails the root's scrape.
			var rf adapter.Findings
			sub := &scrape{ctx: s.ctx, a: s.a, f: &rf, seen: s.seen}
			if err := sub.apply(s.a.rules[gk], obj.Object, ref.FieldLocator(""), depth+1); err != nil {
				s.unresolved(r, v.s, locator, "malformed")
				continue
			}
			podtemplate.MergeFindings(s.f, rf)
		}
	}
	return nil
}

// unresolved records a reference that told nothing: a property with the
// reason and, when the rule says what the reference stands for, a claim
// named after it with confidence unresolved.
func (s *scrape) unresolved(r refRule, name, locator, reason string) {
	name = podtemplate.RedactInto(name, locator, s.f)
	s.f.Properties = append(s.f.Properties, adapter.Property{
		Name: s.a.name + ".reference." + r.kind.Kind, Value: name + " (" + reason + ")"})
	ev := adapter.Evidence{Source: adapter.SourceCRDField, Locator: locator}
	switch r.unresolved {
	case "model":
		s.f.Models = append(s.f.Models, adapter.Model{Name: name, Confidence: adapter.Unresolved, Evidence: ev})
	case "runtime":
		s.f.Runtimes = append(s.f.Runtimes, adapter.Runtime{Name: strings.ToLower(name), Confidence: adapter.Unresolved, Evidence: ev})
	}
}

// ScrapeReferenced reads an object of a referenced kind with that kind's
// rules (adapter.ReferencedScraper), located as a root's fields are.
func (a *Adapter) ScrapeReferenced(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("%s: no object", a.name)
	}
	gk := obj.GroupVersionKind().GroupKind()
	var kind *adapter.Kind
	for i := range a.kinds {
		if a.kinds[i].GroupKind() == gk && a.kinds[i].Role == adapter.RoleReferenced {
			kind = &a.kinds[i]
		}
	}
	if kind == nil {
		return adapter.Findings{}, fmt.Errorf("%s: %s is not a referenced kind of this adapter", a.name, gk)
	}
	f := adapter.Findings{Scrapers: []adapter.Scraper{a.Scraper()}}
	s := &scrape{ctx: ctx, a: a, f: &f, seen: map[string]bool{}}
	if err := s.apply(a.rules[gk], obj.Object, "", 0); err != nil {
		return adapter.Findings{}, fmt.Errorf("%s: %s %s: %w", a.name, gk.Kind, obj.GetName(), err)
	}
	return f, nil
}
