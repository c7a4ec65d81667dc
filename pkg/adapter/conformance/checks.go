package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// suite is one run of the checks.
type suite struct {
	t TB
	h Harness
	a adapter.Adapter
	o Options

	kinds    []adapter.Kind
	tracked  []adapter.Kind // valid tracked kinds
	walkOnly []adapter.Kind // valid walk-only kinds
	// fixtures are the usable fixtures: a tracked kind in a declared
	// version, with a name not used before. Problems are reported by the
	// Fixtures check.
	fixtures []Fixture
	results  map[string]result // first scrape of each usable fixture

	usedSkips map[string]bool
}

// determinismRuns is how many times the Determinism check scrapes a
// fixture: map iteration order changes between runs.
const determinismRuns = 10

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (s *suite) run() {
	t := s.t
	t.Helper()
	kinds, perr := s.declarations()
	s.kinds = kinds
	for _, k := range kinds {
		if k.Validate() != nil {
			continue
		}
		switch k.Role {
		case adapter.RoleTracked:
			s.tracked = append(s.tracked, k)
		case adapter.RoleWalkOnly:
			s.walkOnly = append(s.walkOnly, k)
		}
	}

	s.sub(t, CheckDeclarations, CheckDeclarations, func(t TB) { s.checkDeclarations(t, kinds, perr) })

	scrapeChecks := []string{CheckFixtures, CheckDeterminism, CheckNoMutation, CheckWellFormed, CheckNoSecrets,
		CheckMalformedInput, CheckCrossVersion, CheckExpectations, CheckReferences}
	if len(s.tracked) == 0 {
		reason := fmt.Sprintf("adapter %q declares no valid tracked kind (walk-only: %s), so the core never calls Scrape for its objects",
			s.a.Name(), kindList(s.walkOnly))
		for _, c := range scrapeChecks {
			s.notRun(t, c, reason)
		}
		if n := len(s.h.Fixtures()); n > 0 {
			t.Errorf("conformance: the harness gives %d fixture(s), but adapter %q declares no valid tracked kind to scrape them as; "+
				"remove the fixtures, or declare the kind they belong to with Role adapter.RoleTracked", n, s.a.Name())
		}
		s.sub(t, CheckNonTrackedKinds, CheckNonTrackedKinds, s.checkNonTracked)
		return
	}

	s.selectFixtures()
	s.sub(t, CheckFixtures, CheckFixtures, s.checkFixtures)
	s.perFixture(t, CheckDeterminism, s.checkDeterminism)
	s.perFixture(t, CheckNoMutation, s.checkNoMutation)
	s.perFixture(t, CheckWellFormed, s.checkWellFormed)
	s.perFixture(t, CheckNoSecrets, s.checkNoSecrets)
	s.perFixture(t, CheckMalformedInput, s.checkMalformed)
	var multi []adapter.Kind
	for _, k := range s.tracked {
		if len(k.Versions) > 1 {
			multi = append(multi, k)
		}
	}
	if len(multi) == 0 {
		s.notRun(t, CheckCrossVersion, fmt.Sprintf("every tracked kind declares a single version (%s); there is no other version to relabel a fixture into",
			kindList(s.tracked)))
	} else {
		s.perFixture(t, CheckCrossVersion, func(t TB, fx Fixture) { s.checkCrossVersion(t, fx, multi) })
	}
	s.sub(t, CheckNonTrackedKinds, CheckNonTrackedKinds, s.checkNonTracked)
	s.perFixture(t, CheckExpectations, s.checkExpectations)
	s.perFixture(t, CheckReferences, s.checkReferences)
}

// notRun logs why a check does not run and accepts Skips that name it.
func (s *suite) notRun(t TB, check, reason string) {
	t.Helper()
	for _, sk := range s.o.Skip {
		if sk.Name == check || strings.HasPrefix(sk.Name, check+"/") {
			s.usedSkips[sk.Name] = true
		}
	}
	t.Logf("conformance: %s not run: %s", check, reason)
}

// perFixture runs check as a subtest with one subtest per usable fixture.
func (s *suite) perFixture(t TB, check string, f func(t TB, fx Fixture)) {
	t.Helper()
	s.sub(t, check, check, func(t TB) {
		if len(s.fixtures) == 0 {
			t.Logf("conformance: no usable fixture (see the %s check)", CheckFixtures)
			return
		}
		for _, fx := range s.fixtures {
			s.sub(t, check+"/"+fx.Name, fx.Name, func(t TB) { f(t, fx) })
		}
	})
}

func kindList(ks []adapter.Kind) string {
	if len(ks) == 0 {
		return "none"
	}
	var out []string
	for _, k := range ks {
		out = append(out, k.String())
	}
	return strings.Join(out, ", ")
}

// declarations calls Kinds, recovering a panic.
func (s *suite) declarations() (kinds []adapter.Kind, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			kinds, panicked = nil, p
		}
	}()
	return s.a.Kinds(), nil
}

// ---- Declarations ----------------------------------------------------------

func (s *suite) checkDeclarations(t TB, kinds []adapter.Kind, panicked any) {
	t.Helper()
	name := s.a.Name()
	if !dnsLabel.MatchString(name) || len(name) > 63 {
		t.Errorf("Name() = %q: an adapter name must be a DNS label (lower-case letters, digits and '-', at most 63 characters, "+
			"starting and ending with a letter or digit), because it is used in the --adapters flag and in document properties", name)
	}
	if panicked != nil {
		t.Errorf("Kinds() panicked: %v; Kinds must return the adapter's declarations without failing", panicked)
		return
	}
	if len(kinds) == 0 {
		t.Errorf("Kinds() returned no kind: an adapter must declare every kind it knows, tracked or walk-only (adapter.Kind)")
		return
	}
	gks := map[schema.GroupKind]int{}
	grs := map[schema.GroupResource]int{}
	for i, k := range kinds {
		if err := k.Validate(); err != nil {
			t.Errorf("Kinds()[%d] is invalid: %v; fix the declaration (adapter.Kind.Validate lists the rules)", i, err)
		}
		if j, ok := gks[k.GroupKind()]; ok {
			t.Errorf("Kinds()[%d] and Kinds()[%d] both declare %s: declare each group/kind once, listing all its versions in Versions", j, i, k)
		} else {
			gks[k.GroupKind()] = i
		}
		gr := schema.GroupResource{Group: k.Group, Resource: k.Resource}
		if j, ok := grs[gr]; ok && k.Resource != "" {
			t.Errorf("Kinds()[%d] and Kinds()[%d] both declare resource %q in group %q: a resource belongs to one kind", j, i, k.Resource, k.Group)
		} else {
			grs[gr] = i
		}
	}

	s.checkPodOwners(t, kinds)

	// Kinds is stable and returns a copy.
	snapshot := cloneKinds(kinds)
	again, p := s.declarations()
	if p == nil && !reflect.DeepEqual(snapshot, again) {
		t.Errorf("Kinds() returned different declarations on a second call:\n  first  %+v\n  second %+v\n"+
			"  fix: declare the kinds once (a package-level list) and return the same list every time", snapshot, again)
	}
	for i := range kinds {
		kinds[i].Kind += "Changed"
		for j := range kinds[i].Versions {
			kinds[i].Versions[j] = "v999"
		}
		for j := range kinds[i].PodOwners {
			kinds[i].PodOwners[j].Kind += "Changed"
		}
	}
	after, p := s.declarations()
	after = cloneKinds(after)
	// Put back what the caller's changes may have reached.
	for i := range kinds {
		kinds[i].Kind = snapshot[i].Kind
		copy(kinds[i].Versions, snapshot[i].Versions)
		copy(kinds[i].PodOwners, snapshot[i].PodOwners)
	}
	if p == nil && !reflect.DeepEqual(snapshot, after) {
		t.Errorf("changing the slice Kinds() returned changed the adapter's declarations (now %+v):\n"+
			"  fix: return a copy (adapter.CloneKinds), cloning each Kind's Versions and PodOwners, so the caller cannot alter the adapter", after)
	}

	if len(s.tracked) == 0 && s.o.WalkOnly == "" {
		t.Errorf("adapter %q declares no valid tracked kind (walk-only: %s): the core would never report anything for it.\n"+
			"  fix: give the workload kinds Role adapter.RoleTracked; or, if the adapter only connects owners to pods (like grove), "+
			"say so with conformance.WalkOnly(reason)", name, kindList(s.walkOnly))
	}
	if len(s.tracked) == 0 && s.o.WalkOnly != "" {
		t.Logf("conformance: adapter %q is walk-only: %s", name, s.o.WalkOnly)
	}
	if len(s.tracked) > 0 && s.o.WalkOnly != "" {
		t.Errorf("the harness passes conformance.WalkOnly(%q), but adapter %q declares tracked kinds (%s): remove the option",
			s.o.WalkOnly, name, kindList(s.tracked))
	}
}

func cloneKinds(ks []adapter.Kind) []adapter.Kind {
	out := make([]adapter.Kind, len(ks))
	for i, k := range ks {
		k.Versions = slices.Clone(k.Versions)
		k.PodOwners = slices.Clone(k.PodOwners)
		out[i] = k
	}
	return out
}

// checkPodOwners checks that the pod owners a tracked kind declares are
// consistent with the adapter's own declarations (Kind.Validate checks
// their form): a pod owner in a group where the adapter declares kinds must
// be one of them, so that a misspelt kind ("ReplicaSets") cannot silently
// turn every pod of the workload away from its document. Owners in other
// groups belong to other adapters (a NIMService's pods run under apps
// ReplicaSets) and are taken as declared.
func (s *suite) checkPodOwners(t TB, kinds []adapter.Kind) {
	t.Helper()
	groups := map[string]bool{}
	declared := map[schema.GroupKind]bool{}
	for _, k := range kinds {
		groups[k.Group] = true
		declared[k.GroupKind()] = true
	}
	var silent []adapter.Kind
	for i, k := range kinds {
		if k.Role != adapter.RoleTracked {
			continue
		}
		if len(k.PodOwners) == 0 {
			silent = append(silent, k)
		}
		for _, o := range k.PodOwners {
			if groups[o.Group] && !declared[o] {
				t.Errorf("Kinds()[%d] (%s) declares pod owner %s, but the adapter declares no such kind in group %q: "+
					"pods of this workload whose controller is a real kind would never count.\n"+
					"  fix: name the kind that controls the pods exactly as declared (%s), or declare it", i, k, o, o.Group, kindList(kinds))
			}
		}
	}
	if len(silent) > 0 {
		t.Logf("conformance: %s declare(s) no PodOwners: every pod the ownership closure reaches counts for their digests; "+
			"declaring the controller kind of the workload's pods keeps pods forged onto the workload out of its document", kindList(silent))
	}
}

// ---- Fixtures --------------------------------------------------------------

// trackedKind returns the tracked kind of an object's group and kind, and
// whether its version is declared.
func (s *suite) trackedKind(gvk schema.GroupVersionKind) (adapter.Kind, bool, bool) {
	for _, k := range s.tracked {
		if k.GroupKind() == gvk.GroupKind() {
			return k, true, slices.Contains(k.Versions, gvk.Version)
		}
	}
	return adapter.Kind{}, false, false
}

// selectFixtures keeps the fixtures the other checks can use, and scrapes
// each once.
func (s *suite) selectFixtures() {
	seen := map[string]bool{}
	s.results = map[string]result{}
	for _, fx := range s.h.Fixtures() {
		if fx.Name == "" || seen[fx.Name] || fx.Object == nil || fx.Object.Object == nil {
			continue
		}
		seen[fx.Name] = true
		if _, ok, vok := s.trackedKind(fx.Object.GroupVersionKind()); !ok || !vok {
			continue
		}
		fx.Object = cloneObject(fx.Object)
		s.fixtures = append(s.fixtures, fx)
		s.results[fx.Name] = s.scrape(cloneObject(fx.Object))
	}
}

func (s *suite) checkFixtures(t TB) {
	t.Helper()
	seen := map[string]bool{}
	covered := map[string]bool{}
	for i, fx := range s.h.Fixtures() {
		label := fmt.Sprintf("fixture %d (%q)", i, fx.Name)
		switch {
		case fx.Name == "":
			t.Errorf("%s has no Name: give every fixture a short unique name; it names the fixture's subtests", label)
		case seen[fx.Name]:
			t.Errorf("%s: the name is used by an earlier fixture; names must be unique (only the first is checked)", label)
		}
		seen[fx.Name] = true
		if fx.Object == nil || fx.Object.Object == nil {
			t.Errorf("%s has no Object: set it to an object of a tracked kind (conformance.DecodeObject reads YAML)", label)
			continue
		}
		gvk := fx.Object.GroupVersionKind()
		k, ok, vok := s.trackedKind(gvk)
		switch {
		case !ok:
			t.Errorf("%s is a %s, which is not a tracked kind of adapter %q (tracked: %s): fixtures must be objects the core would scrape",
				label, describeGVK(gvk), s.a.Name(), kindList(s.tracked))
		case !vok:
			t.Errorf("%s is %s in version %q, which %s does not declare (versions: %s): use a declared version, or declare it in Kinds",
				label, k, gvk.Version, k, strings.Join(k.Versions, ", "))
		default:
			if !fx.wantErr() {
				covered[k.String()+"/"+gvk.Version] = true
			}
		}
		if fx.wantErr() && !fx.Expect.IsZero() {
			t.Logf("conformance: %s sets WantErr; its Expect is ignored", label)
		}
	}
	var missing []string
	for _, k := range s.tracked {
		for _, v := range k.Versions {
			key := k.String() + "/" + v
			reason, excused := exceptionFor(s.o.MissingFixtures, key)
			switch {
			case covered[key] && excused:
				t.Errorf("conformance.MissingFixture(%q, %q) excuses a kind version that has a fixture: remove the option", k.String(), v)
			case covered[key]:
			case excused:
				t.Logf("conformance: no fixture for %s in %s: %s", k, v, reason)
			default:
				missing = append(missing, key)
				t.Errorf("no fixture for tracked kind %s in declared version %s (a fixture that does not set WantErr).\n"+
					"  fix: add an object of that kind and version, as the operator's documentation shows it, to the harness's Fixtures; "+
					"or pass conformance.MissingFixture(%q, %q, reason)", k, v, k.String(), v)
			}
		}
	}
	for _, e := range s.o.MissingFixtures {
		known := false
		for _, k := range s.tracked {
			for _, v := range k.Versions {
				known = known || e.Name == k.String()+"/"+v
			}
		}
		if !known {
			t.Errorf("conformance.MissingFixture names %q, which is no tracked kind version of adapter %q: remove the option or fix the name",
				e.Name, s.a.Name())
		}
	}
	if len(missing) == 0 {
		t.Logf("conformance: %d fixture(s) cover %d tracked kind version(s)", len(s.fixtures), len(covered))
	}
}

func describeGVK(gvk schema.GroupVersionKind) string {
	if gvk.Kind == "" {
		return "object without kind"
	}
	return fmt.Sprintf("%s (apiVersion %q)", gvk.Kind, gvk.GroupVersion().String())
}

// ---- Determinism -----------------------------------------------------------

func (s *suite) checkDeterminism(t TB, fx Fixture) {
	t.Helper()
	first := s.results[fx.Name]
	if !first.ok() {
		t.Errorf("%s", s.describe(first, fmt.Sprintf("fixture %q", fx.Name)))
		return
	}
	want := marshal(first.findings)
	compare := func(how string, r result) bool {
		if !r.ok() {
			t.Errorf("%s", s.describe(r, fmt.Sprintf("fixture %q (%s)", fx.Name, how)))
			return false
		}
		if errString(r.err) != errString(first.err) {
			t.Errorf("Scrape of fixture %q gave a different error %s:\n  first  %s\n  then   %s\n"+
				"  fix: Scrape must be deterministic (adapter.Adapter); build error messages from the object only, in a fixed order",
				fx.Name, how, errString(first.err), errString(r.err))
			return false
		}
		if got := marshal(r.findings); !bytes.Equal(got, want) {
			t.Errorf("Scrape of fixture %q gave different findings %s:\n%s\n"+
				"  fix: Scrape must be deterministic (adapter.Adapter); never range over a map to produce findings without sorting its keys "+
				"first, and do not depend on time, randomness or global state",
				fx.Name, how, firstDifference(want, got))
			return false
		}
		return true
	}
	same := cloneObject(fx.Object)
	for i := 0; i < determinismRuns; i++ {
		if !compare(fmt.Sprintf("on run %d of the same object", i+2), s.scrape(same)) {
			return
		}
	}
	for i := 0; i < determinismRuns; i++ {
		if !compare(fmt.Sprintf("on deep copy %d", i+1), s.scrape(cloneObject(fx.Object))) {
			return
		}
	}
	// The suite perturbs map order itself, whatever the fixture: Go iterates
	// a small map (up to 8 keys) in a rotation of the order its keys were
	// inserted in, starting mostly at the first, so a fixture's own maps
	// would show an order-dependent adapter only by chance. Every map of the
	// object is rebuilt with its keys inserted in sorted, reversed and
	// shuffled orders (fixed seeds), which together reach every order.
	for _, o := range keyOrders() {
		if !compare("with every map's keys inserted in "+o.name+" order", s.scrape(reorderMaps(fx.Object, o.order))) {
			return
		}
	}
	js, err := json.Marshal(fx.Object.Object)
	if err != nil {
		t.Logf("conformance: fixture %q does not marshal as JSON (%v); JSON round trip not checked", fx.Name, err)
		return
	}
	rt := &unstructured.Unstructured{}
	if err := rt.UnmarshalJSON(js); err != nil {
		t.Logf("conformance: fixture %q does not decode from its JSON (%v); JSON round trip not checked", fx.Name, err)
		return
	}
	compare("after a JSON round trip of the object (as the core receives it)", s.scrape(rt))
}

// ---- NoMutation ------------------------------------------------------------

func (s *suite) checkNoMutation(t TB, fx Fixture) {
	t.Helper()
	obj := cloneObject(fx.Object)
	r := s.scrape(obj)
	if !r.ok() {
		t.Errorf("%s", s.describe(r, fmt.Sprintf("fixture %q", fx.Name)))
		return
	}
	if p, before, after, changed := firstChange(fx.Object.Object, obj.Object, nil); changed {
		t.Errorf("Scrape modified its input object (fixture %q): %s was %s, is now %s.\n"+
			"  fix: the object belongs to the core's informer cache; read it without writing, or work on obj.DeepCopy()",
			fx.Name, p, short(before), short(after))
	}
}

// ---- WellFormed ------------------------------------------------------------

// scrapeOK returns a fixture's findings, or logs why a check that needs them
// does not look at them.
func (s *suite) scrapeOK(t TB, fx Fixture) (adapter.Findings, bool) {
	t.Helper()
	r := s.results[fx.Name]
	switch {
	case !r.ok():
		t.Errorf("%s", s.describe(r, fmt.Sprintf("fixture %q", fx.Name)))
		return adapter.Findings{}, false
	case fx.wantErr():
		t.Logf("conformance: fixture %q sets WantErr; its findings are not checked here", fx.Name)
		return adapter.Findings{}, false
	case r.err != nil:
		t.Logf("conformance: Scrape failed on fixture %q (reported by %s); findings not checked: %v", fx.Name, CheckExpectations, r.err)
		return adapter.Findings{}, false
	}
	return r.findings, true
}

func (s *suite) checkWellFormed(t TB, fx Fixture) {
	t.Helper()
	f, ok := s.scrapeOK(t, fx)
	if !ok {
		return
	}
	for _, p := range wellFormedRefs(f, append(LocatorRoots(), s.o.LocatorRoots...), s.referencedKindNames()) {
		t.Errorf("fixture %q: %s", fx.Name, p)
	}
}

// wellFormed lists what is wrong with findings, each with its fix.
func wellFormed(f adapter.Findings, roots []string) []string { return wellFormedRefs(f, roots, nil) }

// wellFormedRefs is wellFormed for an adapter with referenced kinds: a
// locator may also name a field of a referenced object,
// "<Kind>/<name>:<path>", with path rooted like any other locator.
func wellFormedRefs(f adapter.Findings, roots, referenced []string) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if len(f.Scrapers) == 0 {
		add("Findings.Scrapers is empty: name every scraper that contributed (podtemplate.Scraper() when you used ScrapeTemplate, " +
			"and your own adapter.Scraper{Name, Version, Method})")
	}
	for i, sc := range f.Scrapers {
		if sc.Name == "" || sc.Version == "" || sc.Method == "" {
			add("Scrapers[%d] = %+v: a scraper needs a Name, a Version and a Method (\"crd-spec\", \"pod-template\")", i, sc)
		}
	}
	evidence := func(what string, e adapter.Evidence) {
		if !slices.Contains(Sources(), e.Source) {
			add("%s: evidence source %q is not one of the closed set (%s); use an adapter.Source constant", what, e.Source, sourceList())
		}
		loc := e.Locator
		if kind, path, ok := referenceLocator(loc); ok && slices.Contains(referenced, kind) {
			loc = path
		}
		if msg := locatorProblem(loc, roots); msg != "" {
			add("%s: evidence locator %q %s", what, e.Locator, msg)
		}
	}
	confidence := func(what string, c adapter.Confidence) {
		if !slices.Contains(Confidences(), c) {
			add("%s: confidence %q is not one of declared, inferred, unresolved; use an adapter.Confidence constant", what, c)
		}
	}
	for i, c := range f.Containers {
		what := fmt.Sprintf("Containers[%d] (%q)", i, c.Name)
		if err := c.Validate(); err != nil {
			add("%s: %v", what, err)
		}
		evidence(what, c.Evidence)
	}
	for i, r := range f.Runtimes {
		what := fmt.Sprintf("Runtimes[%d] (%q)", i, r.Name)
		if r.Name == "" {
			add("%s has no Name", what)
		}
		confidence(what, r.Confidence)
		evidence(what, r.Evidence)
	}
	for i, m := range f.Models {
		what := fmt.Sprintf("Models[%d] (%q)", i, m.Name)
		if m.Name == "" {
			add("%s has no Name: skip a model claim whose value is empty", what)
		}
		confidence(what, m.Confidence)
		evidence(what, m.Evidence)
	}
	for i, d := range f.Data {
		what := fmt.Sprintf("Data[%d] (%q)", i, d.Name)
		if d.Name == "" {
			add("%s has no Name", what)
		}
		if d.Kind == "" {
			add("%s has no Kind: say what the storage is (\"volume\", \"pvc\", \"hostPath\", ...)", what)
		}
		confidence(what, d.Confidence)
		evidence(what, d.Evidence)
	}
	for i, p := range f.Properties {
		if p.Name == "" {
			add("Properties[%d] has no Name (value %q)", i, p.Value)
		}
	}
	for i, r := range f.Redactions {
		what := fmt.Sprintf("Redactions[%d]", i)
		if r.Reason == "" {
			add("%s has no Reason: use podtemplate.ReasonSecretName, ReasonURLCredentials or ReasonToken", what)
		}
		loc := r.Locator
		if kind, path, ok := referenceLocator(loc); ok && slices.Contains(referenced, kind) {
			loc = path
		}
		if msg := locatorProblem(loc, roots); msg != "" {
			add("%s: locator %q %s", what, r.Locator, msg)
		}
	}
	return out
}

func locatorProblem(loc string, roots []string) string {
	if loc == "" {
		return "is empty: every fact must name the field it was read from, e.g. \"spec.template.spec.containers[0].image\""
	}
	for _, r := range roots {
		if loc == r || strings.HasPrefix(loc, r+".") || strings.HasPrefix(loc, r+"[") {
			return ""
		}
	}
	return fmt.Sprintf("does not start with a field of the object (%s): write the path from the object's root, "+
		"e.g. \"spec.template.spec.containers[0].image\" (or add a root with conformance.LocatorRoot)", strings.Join(roots, ", "))
}

func sourceList() string {
	var out []string
	for _, s := range Sources() {
		out = append(out, string(s))
	}
	return strings.Join(out, ", ")
}

// ---- NoSecrets -------------------------------------------------------------

func (s *suite) checkNoSecrets(t TB, fx Fixture) {
	t.Helper()
	f, ok := s.scrapeOK(t, fx)
	if !ok {
		return
	}
	var allowed []string
	for _, a := range s.o.Allowed {
		allowed = append(allowed, a.Name)
	}
	for _, p := range secretProblems(f, fx.Object, allowed) {
		t.Errorf("fixture %q: %s", fx.Name, p)
	}
}

// secretLiterals lists the literal values obj holds under secret-like
// names: env entries {name, value} and annotations whose name
// podtemplate.IsSecretName flags. Values shorter than 6 characters are left
// out, as they would match by chance.
func secretLiterals(obj map[string]any) map[string]string {
	out := map[string]string{} // value -> locator
	walk(obj, nil, func(p path, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if name, ok := m["name"].(string); ok && podtemplate.IsSecretName(name) {
			if val, ok := m["value"].(string); ok && len(val) >= 6 {
				out[val] = p.String() + "(" + name + ")"
			}
		}
		if len(p) > 0 && p[len(p)-1] == "annotations" {
			for k, x := range m {
				if val, ok := x.(string); ok && len(val) >= 6 && podtemplate.IsSecretName(k) {
					out[val] = p.with(k).String()
				}
			}
		}
	})
	return out
}

func secretProblems(f adapter.Findings, obj *unstructured.Unstructured, allowed []string) []string {
	var out []string
	js, err := json.Marshal(f)
	if err != nil {
		return []string{fmt.Sprintf("findings do not marshal as JSON: %v", err)}
	}
	var doc any
	if err := json.Unmarshal(js, &doc); err != nil {
		return []string{fmt.Sprintf("findings do not unmarshal from JSON: %v", err)}
	}
	var secrets map[string]string
	if obj != nil {
		secrets = secretLiterals(obj.Object)
	}
	values := make([]string, 0, len(secrets))
	for v := range secrets {
		values = append(values, v)
	}
	sort.Strings(values)
	walk(doc, nil, func(p path, v any) {
		str, ok := v.(string)
		if !ok {
			return
		}
		for _, val := range values {
			if strings.Contains(str, val) {
				out = append(out, fmt.Sprintf("findings %s holds the literal value of %s, whose name looks like a secret "+
					"(podtemplate.IsSecretName).\n  fix: never read the value of a secret-like env var or annotation; record an "+
					"adapter.Redaction{Locator, Reason: podtemplate.ReasonSecretName} instead", p, secrets[val]))
			}
		}
		check := str
		for _, a := range allowed {
			if a != "" {
				check = strings.ReplaceAll(check, a, "")
			}
		}
		if masked, reasons := podtemplate.Redact(check); len(reasons) > 0 {
			out = append(out, fmt.Sprintf("findings %s holds a value that podtemplate.Redact masks (%s); masked, it reads %q.\n"+
				"  fix: pass every value you report through podtemplate.Redact and record an adapter.Redaction for each reason; "+
				"if the value is known to be harmless, pass conformance.AllowValue(value, reason) in the harness",
				p, strings.Join(reasons, ", "), masked))
		}
	})
	return out
}

// ---- MalformedInput --------------------------------------------------------

// maxReported caps the failures reported per fixture by the checks that try
// many variants; the rest are counted.
const maxReported = 10

func (s *suite) checkMalformed(t TB, fx Fixture) {
	t.Helper()
	var (
		n, errs, bad int
		slowest      time.Duration
		slowestWhat  string
		start        = time.Now()
	)
	mutations(fx.Object, s.o.HugeList, s.o.NestingDepth, func(m mutation) bool {
		n++
		r := s.scrape(m.obj)
		if r.elapsed > slowest {
			slowest, slowestWhat = r.elapsed, m.String()
		}
		if !r.ok() {
			bad++
			if bad <= maxReported {
				t.Errorf("%s", s.describe(r, fmt.Sprintf("fixture %q with %s", fx.Name, m)))
			}
			return !r.hung // one hang is enough: each costs two budgets
		}
		if r.err != nil {
			errs++
		}
		return true
	})
	if bad > maxReported {
		t.Errorf("... and %d more malformed variants of fixture %q made Scrape panic or hang", bad-maxReported, fx.Name)
	}
	t.Logf("conformance: %d malformed variants of %q: %d returned an error, %d findings; slowest %s (%s); total %s",
		n, fx.Name, errs, n-errs-bad, slowest.Round(time.Microsecond), slowestWhat, time.Since(start).Round(time.Millisecond))
}

// ---- CrossVersion ----------------------------------------------------------

func (s *suite) checkCrossVersion(t TB, fx Fixture, multi []adapter.Kind) {
	t.Helper()
	gvk := fx.Object.GroupVersionKind()
	i := slices.IndexFunc(multi, func(k adapter.Kind) bool { return k.GroupKind() == gvk.GroupKind() })
	if i < 0 {
		t.Logf("conformance: %s declares a single version; nothing to relabel fixture %q into", gvk.GroupKind(), fx.Name)
		return
	}
	for _, v := range multi[i].Versions {
		if v == gvk.Version {
			continue
		}
		obj := cloneObject(fx.Object)
		obj.SetAPIVersion(schema.GroupVersion{Group: gvk.Group, Version: v}.String())
		r := s.scrape(obj)
		if !r.ok() {
			t.Errorf("%s", s.describe(r, fmt.Sprintf("fixture %q (%s) relabelled as version %s, a shape that version does not have", fx.Name, gvk.Version, v)))
			continue
		}
		t.Logf("conformance: fixture %q relabelled %s -> %s: %s", fx.Name, gvk.Version, v, summary(r))
	}
}

func summary(r result) string {
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	f := r.findings
	return fmt.Sprintf("%d containers, %d runtimes, %d models, %d data", len(f.Containers), len(f.Runtimes), len(f.Models), len(f.Data))
}

// ---- NonTrackedKinds -------------------------------------------------------

// UndeclaredGroup and UndeclaredKind name the kind the NonTrackedKinds check
// scrapes to see that an adapter refuses a kind it does not declare.
const (
	UndeclaredGroup = "conformance.aibom.dev"
	UndeclaredKind  = "ConformanceUndeclared"
)

func (s *suite) checkNonTracked(t TB) {
	t.Helper()
	type probe struct {
		name, why string
		obj       *unstructured.Unstructured
	}
	var probes []probe
	var body map[string]any
	if len(s.fixtures) > 0 {
		body = s.fixtures[0].Object.Object
	}
	mk := func(gv schema.GroupVersion, kind string, from map[string]any) *unstructured.Unstructured {
		obj := map[string]any{"metadata": map[string]any{"name": "conformance", "namespace": "default"}, "spec": map[string]any{}}
		if from != nil {
			obj, _ = clone(from).(map[string]any)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(gv.String())
		u.SetKind(kind)
		return u
	}
	for _, k := range s.walkOnly {
		for _, v := range k.Versions {
			gv := schema.GroupVersion{Group: k.Group, Version: v}
			why := "a walk-only kind: the core never scrapes it"
			probes = append(probes, probe{k.String() + "/" + v, why, mk(gv, k.Kind, nil)})
			if body != nil {
				probes = append(probes, probe{k.String() + "/" + v + " with the body of fixture " + s.fixtures[0].Name, why, mk(gv, k.Kind, body)})
			}
		}
	}
	if len(s.walkOnly) == 0 {
		t.Logf("conformance: adapter %q declares no walk-only kind; only an undeclared kind is tried", s.a.Name())
	}
	gv := schema.GroupVersion{Group: UndeclaredGroup, Version: "v1"}
	why := "a kind the adapter does not declare"
	probes = append(probes, probe{UndeclaredKind + "." + UndeclaredGroup, why, mk(gv, UndeclaredKind, nil)})
	if body != nil {
		probes = append(probes, probe{UndeclaredKind + "." + UndeclaredGroup + " with the body of fixture " + s.fixtures[0].Name, why,
			mk(gv, UndeclaredKind, body)})
	}
	for _, p := range probes {
		r := s.scrape(p.obj)
		switch {
		case !r.ok():
			t.Errorf("%s", s.describe(r, fmt.Sprintf("a %s object, %s", p.name, p.why)))
		case r.err == nil:
			t.Errorf("Scrape returned no error for a %s object, %s.\n"+
				"  fix: check the object's group, kind and version against the tracked declarations first and return an error "+
				"otherwise, so that a wiring mistake in the core is loud instead of a document for the wrong object", p.name, p.why)
		default:
			t.Logf("conformance: %s refused: %v", p.name, r.err)
		}
	}
}

// ---- Expectations ----------------------------------------------------------

func (s *suite) checkExpectations(t TB, fx Fixture) {
	t.Helper()
	r := s.results[fx.Name]
	if !r.ok() {
		t.Errorf("%s", s.describe(r, fmt.Sprintf("fixture %q", fx.Name)))
		return
	}
	if fx.wantErr() {
		if r.err == nil {
			t.Errorf("fixture %q sets WantErr, but Scrape returned no error (findings: %s).\n"+
				"  fix: a field of the wrong type on a path the adapter reads must be an error naming its locator", fx.Name, summary(r))
		} else {
			t.Logf("conformance: fixture %q refused as expected: %v", fx.Name, r.err)
		}
		return
	}
	if r.err != nil {
		t.Errorf("Scrape failed on fixture %q, which does not set WantErr: %v.\n"+
			"  fix: the adapter must read this object; or, if the object is malformed on purpose, set WantErr", fx.Name, r.err)
		return
	}
	for _, p := range unmet(fx.Expect, r.findings) {
		t.Errorf("fixture %q: %s", fx.Name, p)
	}
}

// unmet lists the expectations the findings do not meet.
func unmet(e Expect, f adapter.Findings) []string {
	var out []string
	var images []string
	for _, c := range f.Containers {
		images = append(images, c.Image)
	}
	for _, img := range e.Images {
		if !slices.Contains(images, img) {
			out = append(out, fmt.Sprintf("no container with image %q; the containers' images are %q", img, images))
		}
	}
	claims := func(what, plural string, want []Claim, got []Claim) {
		for _, w := range want {
			if !slices.ContainsFunc(got, func(g Claim) bool {
				return g.Name == w.Name && (w.Confidence == "" || g.Confidence == w.Confidence)
			}) {
				out = append(out, fmt.Sprintf("no %s claim %s; the %s claims found are: %s", what, w, plural, claimList(got)))
			}
		}
	}
	var rt, md, dt []Claim
	for _, r := range f.Runtimes {
		rt = append(rt, Claim{r.Name, r.Confidence})
	}
	for _, m := range f.Models {
		md = append(md, Claim{m.Name, m.Confidence})
	}
	for _, d := range f.Data {
		dt = append(dt, Claim{d.Name, d.Confidence})
	}
	claims("runtime", "runtime", e.Runtimes, rt)
	claims("model", "model", e.Models, md)
	claims("data", "data", e.Data, dt)
	var fw []Claim
	for _, x := range f.Frameworks {
		fw = append(fw, Claim{x.Name, x.Confidence})
	}
	claims("framework", "framework", e.Frameworks, fw)
	var inits []string
	for _, c := range f.Containers {
		if c.Init {
			inits = append(inits, c.Name)
		}
	}
	for _, n := range e.InitContainers {
		if !slices.Contains(inits, n) {
			out = append(out, fmt.Sprintf("no init container %q; the init containers found are %q", n, inits))
		}
	}
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		want := e.Properties[n]
		var got []string
		for _, p := range f.Properties {
			if p.Name == n {
				got = append(got, p.Value)
			}
		}
		if !slices.Contains(got, want) {
			if len(got) == 0 {
				out = append(out, fmt.Sprintf("no property %q (want %q)", n, want))
			} else {
				out = append(out, fmt.Sprintf("property %q is %q, want %q", n, got, want))
			}
		}
	}
	containers := make([]string, 0, len(e.PodNames))
	for n := range e.PodNames {
		containers = append(containers, n)
	}
	sort.Strings(containers)
	for _, name := range containers {
		found := false
		for _, c := range f.Containers {
			if c.Name != name {
				continue
			}
			found = true
			for _, pn := range e.PodNames[name] {
				if !slices.Contains(c.PodNames, pn) {
					out = append(out, fmt.Sprintf("container %q (%s) does not list pod name %q; its PodNames are %q",
						name, c.Evidence.Locator, pn, c.PodNames))
				}
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("no container named %q to check PodNames %q on", name, e.PodNames[name]))
		}
	}
	for _, name := range e.ImagesFromPods {
		if !slices.ContainsFunc(f.Containers, func(c adapter.Container) bool { return c.Name == name && c.ImageFromPods && c.Image == "" }) {
			var got []string
			for _, c := range f.Containers {
				got = append(got, fmt.Sprintf("%s (image %q, imageFromPods %v)", c.Name, c.Image, c.ImageFromPods))
			}
			out = append(out, fmt.Sprintf("no container %q that leaves its image to the pods (ImageFromPods, no Image); the containers are %q", name, got))
		}
	}
	for _, w := range e.Redactions {
		if !slices.ContainsFunc(f.Redactions, func(g adapter.Redaction) bool {
			return g.Locator == w.Locator && (w.Reason == "" || g.Reason == w.Reason)
		}) {
			out = append(out, fmt.Sprintf("no redaction at %q (reason %q); the redactions recorded are %+v", w.Locator, w.Reason, f.Redactions))
		}
	}
	return out
}

func claimList(cs []Claim) string {
	if len(cs) == 0 {
		return "none"
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return strings.Join(out, ", ")
}
