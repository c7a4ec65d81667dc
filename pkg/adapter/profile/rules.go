package profile

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
)

// Template shapes.
const (
	ShapeTemplate  = "template"
	ShapePodSpec   = "podSpec"
	ShapeContainer = "container"
)

type condition struct {
	field     path
	fromRoot  bool
	in, notIn []string
	absent    bool
}

type selection struct {
	path    path
	recurse string
	where   []condition
}

type templateRule struct {
	selection
	shape      string
	group      string
	byWildcard bool
}

type containerRule struct {
	selection
	name, group string
}

type fieldRule struct {
	selection
	field        path
	value        string
	reason       string
	mapping      map[string]string
	keepUnmapped bool
	prefix       path
	separator    string
	location     path
	served       path
	version      path
	task         path
	architecture path
	quantization path
	baseModel    path
	baseFromRoot bool
	name         string
	confidence   adapter.Confidence
	platform     bool
}

type refRule struct {
	selection
	unresolved string
	field      path
	kind       schema.GroupKind
	fallback   *schema.GroupKind
}

// kindRules are the compiled rules of one tracked or referenced kind.
type kindRules struct {
	templates  []templateRule
	containers []containerRule
	commands   []fieldRule
	models     []fieldRule
	runtimes   []fieldRule
	data       []fieldRule
	frameworks []fieldRule
	properties []fieldRule
	refs       []refRule
}

func compileSelection(s v1alpha1.Selection, loc string) (selection, error) {
	if strings.TrimSpace(s.Path) == "" {
		return selection{}, fmt.Errorf("%s.path is empty", loc)
	}
	p, err := parsePath(s.Path)
	if err != nil {
		return selection{}, fmt.Errorf("%s.path: %w", loc, err)
	}
	out := selection{path: p, recurse: s.Recurse}
	if s.Recurse != "" && !plainField(s.Recurse) {
		return selection{}, fmt.Errorf("%s.recurse %q must be one field name", loc, s.Recurse)
	}
	for i, c := range s.Where {
		field, fromRoot := strings.CutPrefix(c.Field, "$.")
		fp, err := parsePath(field)
		if err != nil || len(fp) == 0 {
			return selection{}, fmt.Errorf("%s.where[%d].field %q is not a field path", loc, i, c.Field)
		}
		set := 0
		for _, b := range []bool{len(c.In) > 0, len(c.NotIn) > 0, c.Absent} {
			if b {
				set++
			}
		}
		if set > 1 {
			return selection{}, fmt.Errorf("%s.where[%d]: in, notIn and absent are exclusive", loc, i)
		}
		out.where = append(out.where, condition{field: fp, fromRoot: fromRoot, in: lowerAll(c.In), notIn: lowerAll(c.NotIn), absent: c.Absent})
	}
	return out, nil
}

func plainField(s string) bool {
	p, err := parsePath(s)
	return err == nil && len(p) == 1 && p[0].kind == segField
}

func lowerAll(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = strings.ToLower(s)
	}
	return out
}

func optionalPath(s, loc string) (path, error) {
	if s == "" {
		return nil, nil
	}
	p, err := parsePath(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	return p, nil
}

// what says which list a field rule belongs to, for validation.
type what int

const (
	whatCommand what = iota
	whatModel
	whatRuntime
	whatData
	whatProperty
	whatFramework
)

func compileField(r v1alpha1.FieldRule, loc string, w what) (fieldRule, error) {
	sel, err := compileSelection(r.Selection, loc)
	if err != nil {
		return fieldRule{}, err
	}
	out := fieldRule{selection: sel, value: r.Value, reason: strings.TrimSpace(r.Reason), keepUnmapped: r.KeepUnmapped,
		separator: r.Separator, name: r.Name, platform: r.Platform}
	for _, p := range []struct {
		dst  *path
		src  string
		name string
	}{{&out.field, r.Field, "field"}, {&out.prefix, r.Prefix, "prefix"}, {&out.location, r.Location, "location"},
		{&out.served, r.ServedName, "servedName"}, {&out.version, r.Version, "version"},
		{&out.task, r.Task, "task"}, {&out.architecture, r.Architecture, "architecture"}, {&out.quantization, r.Quantization, "quantization"}} {
		if *p.dst, err = optionalPath(p.src, loc+"."+p.name); err != nil {
			return fieldRule{}, err
		}
	}
	base, fromRoot := strings.CutPrefix(r.BaseModel, "$.")
	if out.baseModel, err = optionalPath(base, loc+".baseModel"); err != nil {
		return fieldRule{}, err
	}
	out.baseFromRoot = fromRoot
	if out.separator == "" {
		out.separator = "/"
	}
	if len(r.Map) > 0 {
		out.mapping = map[string]string{}
		for k, v := range r.Map {
			if strings.TrimSpace(v) == "" {
				return fieldRule{}, fmt.Errorf("%s.map[%s] is empty", loc, k)
			}
			out.mapping[strings.ToLower(k)] = v
		}
	}
	if r.Value != "" {
		if r.Field != "" {
			return fieldRule{}, fmt.Errorf("%s: value and field are exclusive", loc)
		}
		if out.reason == "" {
			return fieldRule{}, fmt.Errorf("%s: a constant value needs a reason (why the operator implies it)", loc)
		}
		if w != whatRuntime && w != whatData && w != whatFramework {
			return fieldRule{}, fmt.Errorf("%s: a constant value is only for runtimes, data and frameworks", loc)
		}
	}
	switch r.Confidence {
	case "":
		out.confidence = adapter.Declared
		if r.Value != "" {
			out.confidence = adapter.Inferred
		}
	case string(adapter.Declared), string(adapter.Inferred):
		out.confidence = adapter.Confidence(r.Confidence)
	default:
		return fieldRule{}, fmt.Errorf("%s.confidence %q is not declared or inferred", loc, r.Confidence)
	}
	if r.Platform && w != whatRuntime {
		return fieldRule{}, fmt.Errorf("%s: platform is only for runtimes", loc)
	}
	if (r.Location != "" || r.ServedName != "" || r.Task != "" || r.Architecture != "" || r.Quantization != "" || r.BaseModel != "") && w != whatModel {
		return fieldRule{}, fmt.Errorf("%s: location, servedName, task, architecture, quantization and baseModel are only for models", loc)
	}
	switch w {
	case whatProperty:
		if !propertyName(r.Name) {
			return fieldRule{}, fmt.Errorf("%s.name %q must be a dotted name of letters, digits, '-' and '_'", loc, r.Name)
		}
	case whatData:
		if r.Name == "" {
			out.name = "location"
		}
	case whatFramework:
		switch r.Name {
		case "":
			out.name = adapter.PurposeTraining
		case adapter.PurposeTraining, adapter.PurposeEvaluation:
		default:
			return fieldRule{}, fmt.Errorf("%s.name %q is not a framework purpose (training or evaluation)", loc, r.Name)
		}
	default:
		if r.Name != "" {
			return fieldRule{}, fmt.Errorf("%s.name is only for properties, data and frameworks", loc)
		}
	}
	return out, nil
}

func propertyName(n string) bool {
	if n == "" || len(n) > 128 || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".") || strings.Contains(n, "..") {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func compileRules(r v1alpha1.ProfileRules, loc string, declared map[schema.GroupKind]adapter.Kind) (*kindRules, error) {
	n := len(r.PodTemplates) + len(r.Containers) + len(r.Commands) + len(r.Models) + len(r.Runtimes) + len(r.Data) + len(r.Frameworks) + len(r.Properties) + len(r.References)
	if n > MaxRules {
		return nil, fmt.Errorf("%s: %d rules, more than %d", loc, n, MaxRules)
	}
	kr := &kindRules{}
	for i, t := range r.PodTemplates {
		l := fmt.Sprintf("%s.podTemplates[%d]", loc, i)
		sel, err := compileSelection(t.Selection, l)
		if err != nil {
			return nil, err
		}
		shape := t.Shape
		switch shape {
		case "":
			shape = ShapeTemplate
		case ShapeTemplate, ShapePodSpec, ShapeContainer:
		default:
			return nil, fmt.Errorf("%s.shape %q is not template, podSpec or container", l, t.Shape)
		}
		if t.Group != "" && t.GroupByWildcard {
			return nil, fmt.Errorf("%s: group and groupByWildcard are exclusive", l)
		}
		kr.templates = append(kr.templates, templateRule{selection: sel, shape: shape, group: t.Group, byWildcard: t.GroupByWildcard})
	}
	for i, c := range r.Containers {
		l := fmt.Sprintf("%s.containers[%d]", loc, i)
		sel, err := compileSelection(c.Selection, l)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(c.Name) == "" {
			return nil, fmt.Errorf("%s.name is empty: the core matches the pods' container by name", l)
		}
		kr.containers = append(kr.containers, containerRule{selection: sel, name: c.Name, group: c.Group})
	}
	lists := []struct {
		src  []v1alpha1.FieldRule
		dst  *[]fieldRule
		name string
		w    what
	}{
		{r.Commands, &kr.commands, "commands", whatCommand},
		{r.Models, &kr.models, "models", whatModel},
		{r.Runtimes, &kr.runtimes, "runtimes", whatRuntime},
		{r.Data, &kr.data, "data", whatData},
		{r.Frameworks, &kr.frameworks, "frameworks", whatFramework},
		{r.Properties, &kr.properties, "properties", whatProperty},
	}
	for _, l := range lists {
		for i, fr := range l.src {
			c, err := compileField(fr, fmt.Sprintf("%s.%s[%d]", loc, l.name, i), l.w)
			if err != nil {
				return nil, err
			}
			*l.dst = append(*l.dst, c)
		}
	}
	for i, rr := range r.References {
		l := fmt.Sprintf("%s.references[%d]", loc, i)
		sel, err := compileSelection(rr.Selection, l)
		if err != nil {
			return nil, err
		}
		fp, err := optionalPath(rr.Field, l+".field")
		if err != nil {
			return nil, err
		}
		gk := schema.GroupKind{Group: rr.Group, Kind: rr.Kind}
		if k, ok := declared[gk]; !ok || k.Role != adapter.RoleReferenced {
			return nil, fmt.Errorf("%s: %s is not a referenced kind of this profile", l, gk)
		}
		switch rr.Unresolved {
		case "", "model", "runtime":
		default:
			return nil, fmt.Errorf("%s.unresolved %q is not model or runtime", l, rr.Unresolved)
		}
		ref := refRule{selection: sel, field: fp, kind: gk, unresolved: rr.Unresolved}
		if rr.Fallback != nil {
			fb := schema.GroupKind{Group: rr.Fallback.Group, Kind: rr.Fallback.Kind}
			if k, ok := declared[fb]; !ok || k.Role != adapter.RoleReferenced {
				return nil, fmt.Errorf("%s.fallback: %s is not a referenced kind of this profile", l, fb)
			}
			ref.fallback = &fb
		}
		kr.refs = append(kr.refs, ref)
	}
	return kr, nil
}
