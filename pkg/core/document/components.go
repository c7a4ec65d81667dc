package document

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/imageref"
)

// This file turns findings into components: one component per identity, its
// evidence in CycloneDX's native evidence (every piece kept), its package
// URL, and the links between components that become the dependency graph.

// fact is one component before it gets its bom-ref.
type fact struct {
	tier       tier
	confidence adapter.Confidence
	// id is the component's identity (type, name, version and, for a
	// container, digest or tag); it derives the bom-ref.
	id string
	// locator is the first evidence locator, a tie-breaker in the order.
	locator string
	// paths are the container locators the fact was read from (a runtime's
	// command, a model's flag): they attach it to its container.
	paths []string
	// containerPath is set on container facts: the locators of the
	// containers merged into it.
	containerPaths []string
	// links are the ids of the facts this one depends on.
	links []string
	// baseModels are, for a model (a LoRA adapter), the names of the base
	// models its claims declare.
	baseModels []string
	component  cdx.Component
}

// piece is one piece of evidence for a component.
type piece struct {
	conf adapter.Confidence
	ev   adapter.Evidence
}

// Confidence values of the native evidence, by confidence word.
const (
	confidenceDeclared float32 = 1.0
	confidenceInferred float32 = 0.6
	// confidenceUnresolved is not 0: an unresolved claim still says the fact
	// is expected, and a zero confidence is not written by the encoder.
	confidenceUnresolved float32 = 0.1
)

// ConfidenceValue is the 0-1 value a confidence word is written as in a
// component's evidence.identity: declared 1.0, inferred 0.6, unresolved 0.1.
func ConfidenceValue(c adapter.Confidence) float32 {
	switch c {
	case adapter.Declared:
		return confidenceDeclared
	case adapter.Inferred:
		return confidenceInferred
	}
	return confidenceUnresolved
}

// technique is the CycloneDX identity technique of an evidence source: what
// the owner wrote in a manifest, what a pod reports at run time, or a
// pattern on a name.
func technique(s adapter.Source) cdx.EvidenceIdentityTechnique {
	switch s {
	case adapter.SourcePodStatus:
		return cdx.EvidenceIdentityTechniqueDynamicAnalysis
	case adapter.SourceImagePattern:
		return cdx.EvidenceIdentityTechniqueOther
	}
	return cdx.EvidenceIdentityTechniqueManifestAnalysis
}

// evidence writes pieces as native evidence: one identity (field name) with
// the strongest confidence and one method per piece (technique, confidence,
// locator), and one occurrence per distinct locator (its source as context).
// It returns the strongest confidence word too.
func evidence(pieces []piece) (*cdx.Evidence, adapter.Confidence) {
	ps := slices.Clone(pieces)
	// One method per place: a weaker claim read from the same field adds
	// nothing.
	// Equal ranks (an unknown confidence ranks as unresolved) are ordered
	// by name, so that the order of the claims never matters.
	slices.SortFunc(ps, func(a, b piece) int {
		return cmp.Or(strings.Compare(a.ev.Locator, b.ev.Locator), strings.Compare(string(a.ev.Source), string(b.ev.Source)),
			-cmp.Compare(a.conf.Rank(), b.conf.Rank()), strings.Compare(string(a.conf), string(b.conf)))
	})
	ps = slices.CompactFunc(ps, func(a, b piece) bool { return a.ev == b.ev })
	slices.SortStableFunc(ps, func(a, b piece) int {
		return cmp.Or(-cmp.Compare(a.conf.Rank(), b.conf.Rank()), strings.Compare(string(a.conf), string(b.conf)))
	})
	best := adapter.Unresolved
	if len(ps) > 0 {
		best = ps[0].conf
	}
	methods := make([]cdx.EvidenceIdentityMethod, 0, len(ps))
	var occ []cdx.EvidenceOccurrence
	seen := map[string]bool{}
	for _, p := range ps {
		c := ConfidenceValue(p.conf)
		methods = append(methods, cdx.EvidenceIdentityMethod{Technique: technique(p.ev.Source), Confidence: &c, Value: p.ev.Locator})
		if p.ev.Locator != "" && !seen[p.ev.Locator] {
			seen[p.ev.Locator] = true
			occ = append(occ, cdx.EvidenceOccurrence{Location: p.ev.Locator, AdditionalContext: string(p.ev.Source)})
		}
	}
	slices.SortFunc(occ, func(a, b cdx.EvidenceOccurrence) int { return strings.Compare(a.Location, b.Location) })
	c := ConfidenceValue(best)
	ids := []cdx.EvidenceIdentity{{Field: cdx.EvidenceIdentityFieldTypeName, Confidence: &c, Methods: &methods}}
	e := &cdx.Evidence{Identity: &cdx.EvidenceIdentityChoice{Identities: &ids}}
	if len(occ) > 0 {
		e.Occurrences = &occ
	}
	return e, best
}

// newComponent builds a fact with its evidence, the aibom.confidence
// property and extra properties.
func newComponent(t tier, typ cdx.ComponentType, id, name, version string, pieces []piece, extra []cdx.Property) fact {
	ev, best := evidence(pieces)
	props := append([]cdx.Property{{Name: propConfidence, Value: string(best)}}, extra...)
	f := fact{tier: t, confidence: best, id: string(typ) + "\x00" + id,
		component: cdx.Component{Type: typ, Name: name, Version: version, Properties: &props, Evidence: ev}}
	for _, p := range pieces {
		if f.locator == "" || p.ev.Locator < f.locator {
			f.locator = p.ev.Locator
		}
		f.paths = append(f.paths, p.ev.Locator)
	}
	return f
}

// group collects the pieces of one identity, keeping the order identities
// were first seen in.
type group[T any] struct {
	order []string
	items map[string][]T
}

func (g *group[T]) add(key string, x T) {
	if g.items == nil {
		g.items = map[string][]T{}
	}
	if _, ok := g.items[key]; !ok {
		g.order = append(g.order, key)
	}
	g.items[key] = append(g.items[key], x)
}

// collectFacts turns the findings into components, one per identity, sorted
// by type, name, version and identity, with bom-refs and links.
func collectFacts(in Input) ([]fact, error) {
	facts, err := containerFacts(in)
	if err != nil {
		return nil, err
	}
	facts = append(facts, runtimeFacts(in.Findings.Runtimes)...)
	facts = append(facts, modelFacts(in.Findings.Models)...)
	facts = append(facts, frameworkFacts(in.Findings.Frameworks)...)
	facts = append(facts, dataFacts(in.Findings.Data)...)

	slices.SortFunc(facts, func(a, b fact) int {
		return cmp.Or(
			strings.Compare(string(a.component.Type), string(b.component.Type)),
			strings.Compare(a.component.Name, b.component.Name),
			strings.Compare(a.component.Version, b.component.Version),
			strings.Compare(a.id, b.id),
		)
	})
	// bom-refs: a short hash of the identity, lengthened on the (unlikely)
	// event of a collision. Identities are unique.
	refs := make(map[string]bool, len(facts))
	for i := range facts {
		sum := sha256.Sum256([]byte(facts[i].id))
		h := hex.EncodeToString(sum[:])
		ref := "aibom:" + string(facts[i].component.Type) + ":" + h[:16]
		if refs[ref] {
			ref = "aibom:" + string(facts[i].component.Type) + ":" + h
		}
		refs[ref] = true
		facts[i].component.BOMRef = ref
	}
	link(facts)
	return facts, nil
}

// containerFacts merges the containers that run the same image (repository
// and digest, or tag when no digest is known) into one component each. A
// container that leaves its image to the pods (adapter.Container
// ImageFromPods) runs the image in.Images holds for it, located in pod
// status; without one it is listed unresolved, under its name.
func containerFacts(in Input) ([]fact, error) {
	type member struct {
		c adapter.Container // with the image it runs: written, or read from pods
		d ContainerDigest
		// fromPods marks a container whose image is (or awaits being)
		// read from pod status; img is what was read.
		fromPods bool
		img      ContainerImage
	}
	var g group[member]
	for i, c := range in.Findings.Containers {
		var d ContainerDigest
		if i < len(in.Digests) {
			d = in.Digests[i]
		}
		var img ContainerImage
		if i < len(in.Images) {
			img = in.Images[i]
		}
		fromPods := c.ImageFromPods && strings.TrimSpace(c.Image) == ""
		if img != (ContainerImage{}) {
			if !fromPods {
				return nil, fmt.Errorf("document: container %q: an image read from pods for a container whose image is written (%q)", c.Name, c.Image)
			}
			if img.Image != "" && img.Confidence != adapter.Declared && img.Confidence != adapter.Inferred {
				return nil, fmt.Errorf("document: container %q: image %q read from pods with confidence %q", c.Name, img.Image, img.Confidence)
			}
		}
		imageEvidence := c.Evidence
		if fromPods {
			c.Image = img.Image
			imageEvidence = img.Evidence
		}
		_, _, pinned := ParseImage(c.Image)
		if d.Digest == "" && pinned != "" {
			d = ContainerDigest{Digest: pinned, Confidence: adapter.Declared,
				Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: imageEvidence.Locator}}
			if fromPods {
				d.Evidence.Source = adapter.SourcePodStatus
			}
		}
		if d.Digest != "" {
			if !IsDigest(d.Digest) {
				return nil, fmt.Errorf("document: container %q: malformed digest %q", c.Name, d.Digest)
			}
			if d.Confidence != adapter.Declared && d.Confidence != adapter.Inferred {
				return nil, fmt.Errorf("document: container %q: digest %s with confidence %q", c.Name, d.Digest, d.Confidence)
			}
		}
		for _, r := range d.Running {
			if !IsDigest(r.Digest) || r.Pods < 1 {
				return nil, fmt.Errorf("document: container %q: running digest %q on %d pods", c.Name, r.Digest, r.Pods)
			}
		}
		g.add(imageIdentity(c, d), member{c, d, fromPods, img})
	}
	var out []fact
	for _, key := range g.order {
		ms := g.items[key]
		// A total order, so that the order the findings came in never shows.
		slices.SortFunc(ms, func(a, b member) int {
			return cmp.Or(strings.Compare(a.c.Evidence.Locator, b.c.Evidence.Locator),
				strings.Compare(a.c.Name, b.c.Name), strings.Compare(a.c.Group, b.c.Group),
				cmp.Compare(boolInt(a.c.Init), boolInt(b.c.Init)), strings.Compare(a.c.Image, b.c.Image),
				strings.Compare(string(a.c.Evidence.Source), string(b.c.Evidence.Source)),
				-cmp.Compare(a.d.Confidence.Rank(), b.d.Confidence.Rank()), strings.Compare(a.d.Digest, b.d.Digest),
				strings.Compare(a.d.Evidence.Locator, b.d.Evidence.Locator), strings.Compare(string(a.d.Evidence.Source), string(b.d.Evidence.Source)),
				cmp.Compare(boolInt(a.fromPods), boolInt(b.fromPods)), strings.Compare(a.img.Evidence.Locator, b.img.Evidence.Locator),
				-cmp.Compare(a.img.Confidence.Rank(), b.img.Confidence.Rank()))
		})
		first := ms[0]
		image := strings.TrimSpace(first.c.Image)
		ref := imageref.Parse(image)
		repo, tag := ref.Repository, ref.Tag
		invalid := image != "" && !ref.Valid
		name := repo
		if name == "" || invalid {
			// An image that is no valid reference ("<image>") is named as
			// written and flagged, never normalised into a repository it
			// does not name.
			name = image
		}
		if name == "" {
			name = first.c.Name
		}

		var pieces []piece
		var names, groups []string
		allInit, anyFromPods, allPinned := true, false, true
		var digest ContainerDigest
		running := map[string]int{}
		for _, m := range ms {
			switch {
			case !m.fromPods && m.c.Image != "":
				// The image reference is written in the spec.
				pieces = append(pieces, piece{adapter.Declared, m.c.Evidence})
			case m.fromPods && m.c.Image != "":
				// Read from pod status; the adapter's field says why the
				// container runs, not which image.
				pieces = append(pieces, piece{m.img.Confidence, m.img.Evidence}, piece{adapter.Unresolved, m.c.Evidence})
			default:
				pieces = append(pieces, piece{adapter.Unresolved, m.c.Evidence})
			}
			names = append(names, m.c.Name)
			if m.c.Group != "" {
				groups = append(groups, m.c.Group)
			}
			allInit = allInit && m.c.Init
			_, _, pin := ParseImage(m.c.Image)
			allPinned = allPinned && !m.fromPods && pin != ""
			anyFromPods = anyFromPods || m.fromPods
			if m.d.Digest != "" && (digest.Digest == "" || m.d.Confidence.Rank() > digest.Confidence.Rank()) {
				digest = m.d
			}
			for _, r := range m.d.Running {
				running[r.Digest] += r.Pods
			}
		}
		t := tierContainer
		var extra []cdx.Property
		// One aibom.container.name per container that runs the image (in
		// the order of their locators) and, when any has a group, one
		// aibom.container.group each, in the same order: the i-th name and
		// the i-th group belong together.
		for _, n := range names {
			extra = append(extra, cdx.Property{Name: propContainerName, Value: n})
		}
		if allInit {
			t = tierInitContainer
			extra = append(extra, cdx.Property{Name: propContainerInit, Value: "true"})
		}
		if len(groups) > 0 {
			for _, m := range ms {
				extra = append(extra, cdx.Property{Name: propContainerGroup, Value: m.c.Group})
			}
		}
		if invalid {
			extra = append(extra, cdx.Property{Name: propImageInvalid, Value: "true"})
		}
		if anyFromPods {
			extra = append(extra, cdx.Property{Name: propImageFromPods, Value: "true"})
		}
		if allPinned {
			// Every reference written in the spec names its digest.
			extra = append(extra, cdx.Property{Name: propImagePinned, Value: "true"})
		}
		if digest.Digest == "" {
			extra = append(extra, cdx.Property{Name: propDigestConfidence, Value: string(adapter.Unresolved)})
		} else {
			extra = append(extra,
				cdx.Property{Name: propDigestConfidence, Value: string(digest.Confidence)},
				cdx.Property{Name: propDigestSource, Value: string(digest.Evidence.Source)},
				cdx.Property{Name: propDigestLocator, Value: digest.Evidence.Locator},
			)
			extra = append(extra, runningProperties(digest.Digest, runningList(running))...)
		}
		f := newComponent(t, cdx.ComponentTypeContainer, key, name, tag, pieces, extra)
		for _, m := range ms {
			f.containerPaths = append(f.containerPaths, strings.TrimSuffix(m.c.Evidence.Locator, ".image"))
		}
		f.paths = nil
		if repo != "" && !invalid {
			f.component.PackageURL = ociPURL(repo, tag, digest.Digest)
			if digest.Digest != "" {
				f.component.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: strings.TrimPrefix(digest.Digest, "sha256:")}}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// imageIdentity is what makes two containers run the same image: the
// repository and the digest, or the tag when no digest is known; an invalid
// reference as written.
func imageIdentity(c adapter.Container, d ContainerDigest) string {
	image := strings.TrimSpace(c.Image)
	if image == "" {
		return "noimage\x00" + c.Name + "\x00" + c.Evidence.Locator
	}
	if !ValidReference(image) {
		return "invalid\x00" + image
	}
	repo, tag, _ := ParseImage(image)
	if d.Digest != "" {
		return repo + "\x00@" + d.Digest
	}
	return repo + "\x00:" + tag
}

// runningList orders summed running digests: most pods first, then by digest.
func runningList(m map[string]int) []RunningDigest {
	out := make([]RunningDigest, 0, len(m))
	for d, n := range m {
		out = append(out, RunningDigest{Digest: d, Pods: n})
	}
	slices.SortFunc(out, func(a, b RunningDigest) int {
		return cmp.Or(-cmp.Compare(a.Pods, b.Pods), strings.Compare(a.Digest, b.Digest))
	})
	return out
}

// runningProperties tells which pods run what: aibom.digest.pods = <n>
// pods run the component's hash (its digest), and every other digest
// running under the same image is aibom.digest.other.<i> = <digest> with
// aibom.digest.other.<i>.pods = <n>, in the order given (most pods first),
// at most MaxRunningListed, then aibom.digest.other.omitted = <n> when
// there were more. The hash itself is never repeated as a property.
func runningProperties(digest string, running []RunningDigest) []cdx.Property {
	var out, others []cdx.Property
	listed, omitted := 0, 0
	for _, r := range running {
		switch {
		case r.Digest == digest:
			out = append(out, cdx.Property{Name: propDigestPods, Value: strconv.Itoa(r.Pods)})
		case listed == MaxRunningListed:
			omitted++
		default:
			p := propDigestOther + strconv.Itoa(listed)
			others = append(others, cdx.Property{Name: p, Value: r.Digest}, cdx.Property{Name: p + ".pods", Value: strconv.Itoa(r.Pods)})
			listed++
		}
	}
	if omitted > 0 {
		others = append(others, cdx.Property{Name: propDigestOtherOmit, Value: strconv.Itoa(omitted)})
	}
	return append(out, others...)
}

// runtimeFacts gives one component per runtime (name, version) and per
// platform: every claim is a piece of its evidence.
func runtimeFacts(runtimes []adapter.Runtime) []fact {
	// A claim without a version is the versioned runtime of the same name
	// when exactly one version is claimed ("vllm serve" in a container of
	// vllm/vllm-openai:v0.6.3 is vLLM v0.6.3).
	versions := map[string][]string{}
	for _, r := range runtimes {
		k := strconv.FormatBool(r.Platform) + "\x00" + r.Name
		if r.Version != "" && !slices.Contains(versions[k], r.Version) {
			versions[k] = append(versions[k], r.Version)
		}
	}
	runtimes = slices.Clone(runtimes) // the input is not changed
	for i, r := range runtimes {
		if k := strconv.FormatBool(r.Platform) + "\x00" + r.Name; r.Version == "" && len(versions[k]) == 1 {
			runtimes[i].Version = versions[k][0]
		}
	}
	return groupFacts(runtimes,
		func(r adapter.Runtime) string {
			return strconv.FormatBool(r.Platform) + "\x00" + r.Name + "\x00" + r.Version
		},
		func(r adapter.Runtime) piece { return piece{r.Confidence, r.Evidence} },
		func(key string, rs []adapter.Runtime, pieces []piece) fact {
			typ := cdx.ComponentTypeApplication
			if rs[0].Platform {
				typ = cdx.ComponentTypePlatform
			}
			f := newComponent(tierRuntime, typ, key, rs[0].Name, rs[0].Version, pieces, nil)
			f.component.PackageURL = runtimePURL(rs[0].Name, rs[0].Version)
			return f
		})
}

// modelFacts gives one component per model (name, version): every claim is
// a piece of its evidence; the sources and served names of all claims are
// kept as properties.
func modelFacts(models []adapter.Model) []fact {
	// A claim that names a model without a version (a --model flag) and a
	// claim that names its one version (a CRD's revision) are the same
	// model: one component, with both as evidence. With several versions
	// of a name known, the unversioned claim stays apart (it could be any).
	versions := map[string]map[string]bool{}
	for _, m := range models {
		if m.Version != "" {
			if versions[m.Name] == nil {
				versions[m.Name] = map[string]bool{}
			}
			versions[m.Name][m.Version] = true
		}
	}
	merged := make([]adapter.Model, len(models))
	for i, m := range models {
		if m.Version == "" && len(versions[m.Name]) == 1 {
			for v := range versions[m.Name] {
				m.Version = v
			}
		}
		merged[i] = m
	}
	return groupFacts(merged,
		func(m adapter.Model) string { return m.Name + "\x00" + m.Version },
		func(m adapter.Model) piece { return piece{m.Confidence, m.Evidence} },
		func(key string, ms []adapter.Model, pieces []piece) fact {
			var sources, served, quants, tasks, archs, bases []string
			nimImage := false
			for _, m := range ms {
				nimImage = nimImage || m.Evidence.Source == adapter.SourceImagePattern
				if m.Source != "" {
					sources = append(sources, m.Source)
				}
				if m.ServedName != "" {
					served = append(served, m.ServedName)
				}
				if m.Quantization != "" {
					quants = append(quants, m.Quantization)
				}
				if m.Task != "" {
					tasks = append(tasks, m.Task)
				}
				if m.Architecture != "" {
					archs = append(archs, m.Architecture)
				}
				if m.BaseModel != "" {
					bases = append(bases, m.BaseModel)
				}
			}
			var extra []cdx.Property
			for _, v := range sortedDistinct(sources) {
				extra = append(extra, cdx.Property{Name: propModelSource, Value: v})
			}
			for _, v := range sortedDistinct(served) {
				extra = append(extra, cdx.Property{Name: propModelServedName, Value: v})
			}
			// Quantisation: as declared (a server flag, a CRD field), else
			// as the model's name states it; never guessed.
			switch q := sortedDistinct(quants); {
			case len(q) > 0:
				for _, v := range q {
					extra = append(extra, cdx.Property{Name: propModelQuantization, Value: v})
				}
				extra = append(extra, cdx.Property{Name: propModelQuantFrom, Value: "declared"})
			case adapter.QuantizationFromName(ms[0].Name) != "":
				extra = append(extra, cdx.Property{Name: propModelQuantization, Value: adapter.QuantizationFromName(ms[0].Name)},
					cdx.Property{Name: propModelQuantFrom, Value: "model-name"})
			}
			f := newComponent(tierModel, cdx.ComponentTypeMachineLearningModel, key, ms[0].Name, ms[0].Version, pieces, extra)
			f.component.PackageURL = modelPURL(ms[0].Name, ms[0].Version, sources, nimImage)
			f.component.ModelCard = modelCard(sortedDistinct(tasks), sortedDistinct(archs))
			f.baseModels = sortedDistinct(bases)
			for _, b := range f.baseModels {
				*f.component.Properties = append(*f.component.Properties, cdx.Property{Name: propModelBase, Value: b})
			}
			return f
		})
}

// modelCard is the model card of what the evidence declares: the task and
// the architecture (the first of each in order when claims differ); nil
// when nothing is known, never invented.
func modelCard(tasks, archs []string) *cdx.MLModelCard {
	if len(tasks) == 0 && len(archs) == 0 {
		return nil
	}
	p := &cdx.MLModelParameters{}
	if len(tasks) > 0 {
		p.Task = tasks[0]
	}
	if len(archs) > 0 {
		p.ModelArchitecture = archs[0]
	}
	return &cdx.MLModelCard{ModelParameters: p}
}

// frameworkFacts gives one component per evaluation or training framework.
func frameworkFacts(frameworks []adapter.Framework) []fact {
	return groupFacts(frameworks,
		func(x adapter.Framework) string { return x.Name + "\x00" + x.Purpose },
		func(x adapter.Framework) piece { return piece{x.Confidence, x.Evidence} },
		func(key string, xs []adapter.Framework, pieces []piece) fact {
			return newComponent(tierFramework, cdx.ComponentTypeFramework, key, xs[0].Name, "", pieces,
				[]cdx.Property{{Name: propFrameworkPurpose, Value: xs[0].Purpose}})
		})
}

// dataFacts gives one component per data source (name and kind).
func dataFacts(data []adapter.Data) []fact {
	return groupFacts(data,
		func(d adapter.Data) string { return d.Name + "\x00" + d.Kind },
		func(d adapter.Data) piece { return piece{d.Confidence, d.Evidence} },
		func(key string, ds []adapter.Data, pieces []piece) fact {
			return newComponent(tierData, cdx.ComponentTypeData, key, ds[0].Name, "", pieces,
				[]cdx.Property{{Name: propDataKind, Value: ds[0].Kind}})
		})
}

// groupFacts builds one fact per identity: claims are grouped by key (in
// the order identities are first seen), and build gets each group with the
// pieces of evidence of its claims.
func groupFacts[T any](claims []T, key func(T) string, ev func(T) piece, build func(key string, group []T, pieces []piece) fact) []fact {
	var g group[T]
	for _, c := range claims {
		g.add(key(c), c)
	}
	out := make([]fact, 0, len(g.order))
	for _, k := range g.order {
		xs := g.items[k]
		pieces := make([]piece, len(xs))
		for i, x := range xs {
			pieces[i] = ev(x)
		}
		out = append(out, build(k, xs, pieces))
	}
	return out
}

// sortedDistinct returns the distinct values of list, sorted.
func sortedDistinct(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

// link records which component depends on which (fact.links), from where
// their evidence was read:
//   - a container depends on the platforms, runtimes and frameworks read
//     from it (a platform then depends on the runtimes of the container);
//     with none, on the models and data read from it;
//   - a runtime or framework depends on the models and data read from its
//     container, and on those read from no container (a CRD field);
//   - the workload (metadata.component) depends on every container and on
//     the runtimes and frameworks read from no container (see encode).
func link(facts []fact) {
	// Which container facts each fact was read from: a locator lies inside
	// a container when a container path is one of its prefixes ending just
	// before ".", "(" or "[" (one map lookup per such boundary).
	byPath := map[string][]int{}
	for j, c := range facts {
		if c.component.Type == cdx.ComponentTypeContainer {
			for _, p := range c.containerPaths {
				if p != "" {
					byPath[p] = append(byPath[p], j)
				}
			}
		}
	}
	owner := make([][]int, len(facts))  // fact -> the container facts it was read from
	readIn := make([][]int, len(facts)) // container fact -> the facts read from it, in order
	for i, f := range facts {
		if f.component.Type == cdx.ComponentTypeContainer {
			continue
		}
		seen := map[int]bool{}
		for _, l := range f.paths {
			for k := 1; k < len(l); k++ {
				if !strings.ContainsRune(".([", rune(l[k])) {
					continue
				}
				for _, j := range byPath[l[:k]] {
					if !seen[j] {
						seen[j] = true
						owner[i] = append(owner[i], j)
						readIn[j] = append(readIn[j], i)
					}
				}
			}
		}
	}
	isRuntime := func(f fact) bool {
		return f.component.Type == cdx.ComponentTypeApplication || f.component.Type == cdx.ComponentTypeFramework
	}
	isContent := func(f fact) bool {
		return f.component.Type == cdx.ComponentTypeMachineLearningModel || f.component.Type == cdx.ComponentTypeData
	}
	for c := range facts {
		if facts[c].component.Type != cdx.ComponentTypeContainer {
			continue
		}
		var platforms, runtimes, content []int
		for _, i := range readIn[c] {
			switch {
			case facts[i].component.Type == cdx.ComponentTypePlatform:
				platforms = append(platforms, i)
			case isRuntime(facts[i]):
				runtimes = append(runtimes, i)
			case isContent(facts[i]):
				content = append(content, i)
			}
		}
		switch {
		case len(platforms) > 0:
			addLinks(facts, c, platforms)
			for _, p := range platforms {
				if len(runtimes) > 0 {
					addLinks(facts, p, runtimes)
				} else {
					addLinks(facts, p, content)
				}
			}
			for _, r := range runtimes {
				addLinks(facts, r, content)
			}
		case len(runtimes) > 0:
			addLinks(facts, c, runtimes)
			for _, r := range runtimes {
				addLinks(facts, r, content)
			}
		default:
			addLinks(facts, c, content)
		}
	}
	// Models and data read from no container are served by every runtime.
	var unattached []int
	for i, f := range facts {
		if isContent(f) && len(owner[i]) == 0 {
			unattached = append(unattached, i)
		}
	}
	for i, f := range facts {
		if isRuntime(f) {
			addLinks(facts, i, unattached)
		}
	}
	// A LoRA adapter depends on the base model it declares, when the
	// document holds it (any version of that name).
	models := map[string][]int{}
	for i, f := range facts {
		if f.component.Type == cdx.ComponentTypeMachineLearningModel {
			models[f.component.Name] = append(models[f.component.Name], i)
		}
	}
	for i, f := range facts {
		for _, b := range f.baseModels {
			addLinks(facts, i, models[b])
		}
	}
}

func addLinks(facts []fact, from int, to []int) {
	for _, t := range to {
		if t != from && !slices.Contains(facts[from].links, facts[t].id) {
			facts[from].links = append(facts[from].links, facts[t].id)
		}
	}
}

// dependencies writes the graph of the kept components: the workload
// depends on every container and on the runtimes and frameworks no
// container holds; each component lists what it depends on. Links to
// dropped components are left out, so that every ref resolves.
func dependencies(workloadRef string, kept []fact) []cdx.Dependency {
	refOf := make(map[string]string, len(kept))
	for _, f := range kept {
		refOf[f.id] = f.component.BOMRef
	}
	linked := map[string]bool{}
	for _, f := range kept {
		for _, l := range f.links {
			linked[l] = true
		}
	}
	var top []string
	for _, f := range kept {
		if f.component.Type == cdx.ComponentTypeContainer || !linked[f.id] &&
			(f.component.Type == cdx.ComponentTypeApplication || f.component.Type == cdx.ComponentTypePlatform || f.component.Type == cdx.ComponentTypeFramework) {
			top = append(top, f.component.BOMRef)
		}
	}
	deps := []cdx.Dependency{{Ref: workloadRef, Dependencies: refList(top)}}
	for _, f := range kept {
		var on []string
		for _, l := range f.links {
			if r, ok := refOf[l]; ok {
				on = append(on, r)
			}
		}
		deps = append(deps, cdx.Dependency{Ref: f.component.BOMRef, Dependencies: refList(on)})
	}
	slices.SortFunc(deps[1:], func(a, b cdx.Dependency) int { return strings.Compare(a.Ref, b.Ref) })
	return deps
}

func refList(refs []string) *[]string {
	if len(refs) == 0 {
		return nil
	}
	out := sortedDistinct(refs)
	return &out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
