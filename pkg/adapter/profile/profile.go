// Package profile turns a declarative adapter (an AdapterProfileSpec:
// kinds with roles, and rules mapping fields to findings) into an
// adapter.Adapter that the core, aibom scan and the conformance suite use
// exactly like a compiled-in one.
//
// A profile is data. Its paths select fields with a small language (field
// names, "[*]", "[N]", "*" for map values; no filters with code, no
// functions), every selection is bounded (MaxMatches nodes, MaxRecurseDepth
// levels, MaxPathSegments segments), and every finding carries the locator
// of the field it came from. Values read from objects are redacted like
// the pod-template scraper's.
//
// Profiles come from files (Load, LoadDir: YAML or JSON holding an
// AIBOMAdapterProfile) and, in the controller, from AIBOMAdapterProfile
// objects. Compile validates a spec completely before anything uses it:
// a broken profile is an error naming the field, never a half-loaded
// adapter.
package profile

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
)

// MaxProfileBytes bounds the size of one profile file.
const MaxProfileBytes = 256 << 10

// MaxRules bounds the rules of one kind, all lists together.
const MaxRules = 128

// ScraperMethod is how a profile's scraper reads: from declared fields.
const ScraperMethod = "profile"

// Origin says where a profile came from: a file path, "embedded:<name>",
// or "cluster:<object name>".
type Origin string

// Adapter is a compiled profile. It implements adapter.Adapter.
type Adapter struct {
	name    string
	version string
	desc    string
	origin  Origin
	kinds   []adapter.Kind
	rules   map[schema.GroupKind]*kindRules
	spec    v1alpha1.AdapterProfileSpec
}

var _ adapter.Adapter = (*Adapter)(nil)

// Name is the adapter's name.
func (a *Adapter) Name() string { return a.name }

// Kinds lists the profile's kinds.
func (a *Adapter) Kinds() []adapter.Kind { return adapter.CloneKinds(a.kinds) }

// Version is the profile's version.
func (a *Adapter) Version() string { return a.version }

// Description is the profile's description.
func (a *Adapter) Description() string { return a.desc }

// Origin says where the profile was loaded from.
func (a *Adapter) Origin() Origin { return a.origin }

// Spec returns a copy of the spec the adapter was compiled from.
func (a *Adapter) Spec() v1alpha1.AdapterProfileSpec { return *a.spec.DeepCopy() }

// Scraper is the entry the adapter puts first in Findings.Scrapers.
func (a *Adapter) Scraper() adapter.Scraper {
	return adapter.Scraper{Name: "profile-" + a.name, Version: a.version, Method: ScraperMethod}
}

// Compile validates a profile spec and returns its adapter. name is used
// when the spec names no adapter (the object's or the file's name).
func Compile(spec v1alpha1.AdapterProfileSpec, name string, origin Origin) (*Adapter, error) {
	a := &Adapter{name: spec.Adapter, version: spec.Version, desc: spec.Description, origin: origin,
		rules: map[schema.GroupKind]*kindRules{}, spec: *spec.DeepCopy()}
	if a.name == "" {
		a.name = name
	}
	if err := validName(a.name); err != nil {
		return nil, fmt.Errorf("profile %s: %w", origin, err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("profile %s (%s): %s", a.name, origin, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(a.version) == "" || len(a.version) > 64 || strings.ContainsAny(a.version, " \t\n") {
		return nil, fail("spec.version must be a short word such as 0.1.0")
	}
	if len(spec.Kinds) == 0 {
		return nil, fail("spec.kinds is empty")
	}
	declared := map[schema.GroupKind]adapter.Kind{}
	for i, pk := range spec.Kinds {
		k := adapter.Kind{Group: pk.Group, Kind: pk.Kind, Resource: pk.Resource,
			Versions: slices.Clone(pk.Versions), Role: adapter.Role(pk.Role), ClusterScoped: pk.ClusterScoped}
		for _, o := range pk.PodOwners {
			k.PodOwners = append(k.PodOwners, schema.GroupKind{Group: o.Group, Kind: o.Kind})
		}
		if err := k.Validate(); err != nil {
			return nil, fail("spec.kinds[%d]: %v", i, err)
		}
		if _, dup := declared[k.GroupKind()]; dup {
			return nil, fail("spec.kinds[%d]: kind %s declared twice", i, k)
		}
		switch k.Group {
		case "":
			// Pods belong to the core; no other core kind is a workload, and
			// a profile must not make the controller read Secrets or
			// ConfigMaps.
			return nil, fail("spec.kinds[%d]: %s is a core kind; a profile declares operator kinds only (Pods belong to the core)", i, k.Kind)
		case "aibom.dev":
			return nil, fail("spec.kinds[%d]: aibom.dev kinds are the controller's own", i)
		}
		declared[k.GroupKind()] = k
		a.kinds = append(a.kinds, k)
	}
	for i, pk := range spec.Kinds {
		loc := fmt.Sprintf("spec.kinds[%d].rules", i)
		gk := schema.GroupKind{Group: pk.Group, Kind: pk.Kind}
		if pk.Rules == nil {
			if adapter.Role(pk.Role) != adapter.RoleWalkOnly {
				// A tracked kind without rules is still a workload: its
				// document has what the core adds (images, digests, roll-up).
				a.rules[gk] = &kindRules{}
			}
			continue
		}
		if adapter.Role(pk.Role) == adapter.RoleWalkOnly {
			return nil, fail("%s: a walk-only kind is never read, it has no rules", loc)
		}
		kr, err := compileRules(*pk.Rules, loc, declared)
		if err != nil {
			return nil, fail("%v", err)
		}
		a.rules[gk] = kr
	}
	return a, nil
}

func validName(n string) error {
	if n == "" || len(n) > 63 {
		return fmt.Errorf("adapter name %q must be 1 to 63 characters", n)
	}
	for i, r := range n {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' && i > 0 && i < len(n)-1
		if !ok {
			return fmt.Errorf("adapter name %q must be lower-case letters, digits and inner '-'", n)
		}
	}
	return nil
}

// Parse reads one profile: YAML or JSON holding an AIBOMAdapterProfile
// (apiVersion aibom.dev/v1alpha1). Unknown fields are errors, so that a
// misspelt rule is not silently ignored.
func Parse(data []byte, origin Origin) (*Adapter, error) {
	if len(data) > MaxProfileBytes {
		return nil, fmt.Errorf("profile %s: %d bytes, more than the %d a profile may have", origin, len(data), MaxProfileBytes)
	}
	var obj v1alpha1.AIBOMAdapterProfile
	// First say where: the field path and line of an unknown field or a
	// value of the wrong shape, in the file's own format.
	if err := checkFields(data, reflect.TypeFor[v1alpha1.AIBOMAdapterProfile]()); err != nil {
		return nil, fmt.Errorf("profile %s: %w", origin, err)
	}
	if err := yaml.UnmarshalStrict(data, &obj); err != nil {
		return nil, fmt.Errorf("profile %s: %s: %s", origin, format(data),
			strings.TrimPrefix(strings.TrimPrefix(err.Error(), "error unmarshaling JSON: "), "while decoding JSON: "))
	}
	if obj.APIVersion != v1alpha1.GroupVersion.String() || obj.Kind != "AIBOMAdapterProfile" {
		return nil, fmt.Errorf("profile %s: want apiVersion %s, kind AIBOMAdapterProfile; got %q, %q",
			origin, v1alpha1.GroupVersion, obj.APIVersion, obj.Kind)
	}
	name := obj.Name
	if name == "" {
		return nil, fmt.Errorf("profile %s: metadata.name is empty", origin)
	}
	a, err := Compile(obj.Spec, name, origin)
	if err != nil {
		// The rule's path is in the error; the file knows its line.
		if line := lineOf(data, err); line > 0 {
			return nil, fmt.Errorf("%w (%s line %d)", err, format(data), line)
		}
		return nil, err
	}
	return a, nil
}

// Load reads profiles from a file or a folder (every *.yaml, *.yml and
// *.json directly in it, in name order). Any profile that does not load
// is an error: a start with a broken profile fails loudly rather than
// running without it.
func Load(p string) ([]*Adapter, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("adapter profile: %w", err)
	}
	if !st.IsDir() {
		a, err := loadFile(p)
		if err != nil {
			return nil, err
		}
		return []*Adapter{a}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("adapter profile: %w", err)
	}
	var out []*Adapter
	for _, e := range entries {
		if e.IsDir() || !isProfileFile(e.Name()) {
			continue
		}
		a, err := loadFile(filepath.Join(p, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("adapter profile: no *.yaml, *.yml or *.json file in %s", p)
	}
	return out, nil
}

// LoadFS reads every profile file at the top of fsys (embedded profiles).
func LoadFS(fsys fs.FS, prefix string) ([]*Adapter, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []*Adapter
	for _, e := range entries {
		if e.IsDir() || !isProfileFile(e.Name()) {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		a, err := Parse(data, Origin(prefix+e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func isProfileFile(n string) bool {
	switch strings.ToLower(filepath.Ext(n)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func loadFile(p string) (*Adapter, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("adapter profile: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxProfileBytes+1)); err != nil {
		return nil, fmt.Errorf("adapter profile %s: %w", p, err)
	}
	return Parse(buf.Bytes(), Origin(p))
}
