package document

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/uuid"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// ToolName is the name under which this controller signs its documents, in
// metadata.tools and aibom.controller.name. Build uses it when Tool.Name is
// empty.
const ToolName = "aibom-controller"

// SpecVersion is the CycloneDX specification version of every document.
const SpecVersion = "1.6"

// ErrTooLarge is returned, wrapped, when a document exceeds Input.MaxBytes
// even with every component dropped.
var ErrTooLarge = errors.New("document exceeds the size limit even with every component dropped")

// Subject identifies the workload a document describes.
type Subject struct {
	// APIVersion is the workload's apiVersion, e.g. "apps/v1".
	APIVersion string
	// Group is the workload's API group; empty for the core group.
	Group string
	// Kind is the workload's kind, e.g. "Deployment". Required.
	Kind string
	// Namespace is the workload's namespace.
	Namespace string
	// Name is the workload's name. Required; it is the name of
	// metadata.component.
	Name string
	// UID is the workload's metadata.uid.
	UID string
	// Generic marks a generic root: a kind no adapter tracks (the topmost
	// controller owner of its chain, or a Pod nothing controls), read by the
	// generic scraper. A profile or adapter for the kind would make its
	// document precise.
	Generic bool `json:",omitempty"`
	// Unread marks a generic root the controller could not read (its kind
	// not served or not permitted): it is the owner as its children's
	// controller references name it, and its spec is unread.
	Unread bool `json:",omitempty"`
}

// Tool identifies the program that writes the document.
type Tool struct {
	// Name is the tool's name; ToolName when empty.
	Name string
	// Version is the tool's version.
	Version string
}

// ContainerDigest is the resolved image digest of one container, and how it
// is known.
type ContainerDigest struct {
	// Digest is "sha256:<64 lower-case hex>", or "" when unresolved.
	Digest string
	// Confidence says how the digest is known; ignored when Digest is "".
	Confidence adapter.Confidence
	// Evidence locates the digest: the pinned image reference in the spec
	// (adapter.SourceImageReference) or a pod's container status
	// (adapter.SourcePodStatus). Ignored when Digest is "".
	Evidence adapter.Evidence
	// Running lists every digest the workload's pods run for the container,
	// with how many pods run it, most pods first (then by digest); empty
	// when the digest is not read from pods. During a rollout it holds the
	// old and the new digest; Digest is the first, the one most pods run.
	// The document lists at most MaxRunningListed of them and says how many
	// more there were.
	Running []RunningDigest
}

// RunningDigest is one digest a container runs, and on how many pods.
type RunningDigest struct {
	// Digest is "sha256:<64 lower-case hex>".
	Digest string
	// Pods is the number of pods running it, at least 1.
	Pods int
}

// ContainerImage is the image of a container whose object names none
// (adapter.Container.ImageFromPods), as the workload's pods report it.
type ContainerImage struct {
	// Image is the image reference the pods' container status reports
	// (status.image); "" while no attributed pod reports one.
	Image string
	// Confidence is declared when every pod that reports the container runs
	// the same image, inferred when they disagree (a rollout) and Image is
	// the one most pods run; ignored when Image is "".
	Confidence adapter.Confidence
	// Evidence locates the status field: source adapter.SourcePodStatus,
	// locator "pods/<pod>.status.containerStatuses[name=<name>].image"
	// (initContainerStatuses for an init container). Ignored when Image is
	// "".
	Evidence adapter.Evidence
}

// MaxRunningListed bounds the running digests listed per container: pods
// of one workload run a handful of digests at most (two during a rollout).
const MaxRunningListed = 10

// MinMaxBytes is the smallest inline cap (Input.MaxBytes) that always fits
// a document: at it, the bare skeleton of any workload whose names are
// within Kubernetes' own limits fits (TestBareSkeletonFitsTheMinimumCap).
const MinMaxBytes = 8192

// MaxOwnedListed bounds the absorbed workloads the document lists under
// aibom.rollup.owned.<i> (the first ones in kind, name order).
// aibom.rollup.ownedCount then gives the exact count and
// aibom.rollup.ownedOmitted how many are not listed, so that a root that
// absorbs thousands of workloads still has a document that fits the inline
// cap and an AIBOM object that etcd accepts.
const MaxOwnedListed = 1000

// Input is everything a document is built from.
type Input struct {
	// Subject is the workload the document describes.
	Subject Subject
	// Tool is the program writing the document.
	Tool Tool
	// Findings are the adapter's findings for the subject, merged with those
	// of every workload it absorbed.
	Findings adapter.Findings
	// Digests holds the resolved digest of Findings.Containers[i] at index i.
	// A missing entry, or one with an empty Digest, means unresolved; Build
	// then still uses a digest pinned in the container's image reference.
	Digests []ContainerDigest
	// Owned lists the tracked workloads the subject absorbed, each as
	// "<Kind>.<group>/<name>" ("<Kind>/<name>" for the core group). Order
	// does not matter: Build sorts a copy by kind, group, then name; no
	// entry is merged with another.
	Owned []string
	// MaxBytes caps the size of the encoded document; 0 means no cap. When
	// the document is larger, Build drops components (see Build).
	MaxBytes int
	// Images holds, at index i, the image read from pod status for
	// Findings.Containers[i] when that container leaves its image to the
	// pods (adapter.Container.ImageFromPods); entries of other containers
	// are zero. Empty when no container does, so that such roots hash and
	// encode exactly as before images were read from pods.
	Images []ContainerImage `json:",omitempty"`
	// References lists the referenced objects the scrape looked up (see
	// adapter.RoleReferenced); empty for most roots, which then hash and
	// encode exactly as before references existed.
	References []Reference `json:",omitempty"`
	// Created is when the newest of the workloads the document describes
	// (the subject and those it absorbed) was created: the document's
	// metadata.timestamp. It comes from the inputs, never from a clock, so
	// that the same inputs give the same bytes; zero (manifests without
	// creationTimestamp) leaves the timestamp out.
	Created time.Time `json:",omitzero"`
}

// Result is a built document.
type Result struct {
	// JSON is the encoded document.
	JSON []byte
	// SHA256 is the lower-case hex SHA-256 of JSON.
	SHA256 string
	// Summary condenses the facts the document was built from.
	Summary Summary
	// Truncated is the number of components dropped to fit Input.MaxBytes.
	Truncated int
	// PropertiesDropped is the number of document-level properties left
	// out when even the skeleton did not fit (a bare document); 0
	// otherwise.
	PropertiesDropped int
}

// Summary condenses a document for status fields and listings. It describes
// the facts Build was given (after de-duplication), before any truncation.
type Summary struct {
	// Runtime is the name of the strongest resolved runtime claim, ties
	// broken by component order; "" when there is none.
	Runtime string
	// Models lists the distinct model names, sorted.
	Models []string
	// Images is the number of container components.
	Images int
	// Confidence is the aggregate confidence: for each distinct runtime and
	// model (by name) its strongest claim that is not unresolved, then the
	// weakest of those; adapter.Unresolved when there are none.
	Confidence adapter.Confidence
}

// Property names written by Build.
const (
	propConfidence        = "aibom.confidence"
	propEvidenceSource    = "aibom.evidence.source"
	propEvidenceLocator   = "aibom.evidence.locator"
	propRollupOwned       = "aibom.rollup.owned."
	propScrape            = "aibom.scrape."
	propRedaction         = "aibom.redaction."
	propTruncation        = "aibom.truncation.applied"
	propWorkload          = "aibom.workload."
	propContainerName     = "aibom.container.name"
	propContainerInit     = "aibom.container.init"
	propContainerGroup    = "aibom.container.group"
	propDigestConfidence  = "aibom.digest.confidence"
	propDigestSource      = "aibom.digest.source"
	propDigestLocator     = "aibom.digest.locator"
	propDigestPods        = "aibom.digest.pods"
	propDigestOther       = "aibom.digest.other."
	propDigestOtherOmit   = "aibom.digest.other.omitted"
	propRollupOwnedCount  = "aibom.rollup.ownedCount"
	propRollupOwnedOmit   = "aibom.rollup.ownedOmitted"
	propDataKind          = "aibom.data.kind"
	propImageInvalid      = "aibom.image.invalid"
	propImageFromPods     = "aibom.image.fromPods"
	propImagePinned       = "aibom.image.pinned"
	propFrameworkPurpose  = "aibom.framework.purpose"
	propModelSource       = "aibom.model.source"
	propModelServedName   = "aibom.model.servedName"
	propModelQuantization = "aibom.model.quantization"
	propModelBase         = "aibom.model.baseModel"
	propModelQuantFrom    = "aibom.model.quantization.source"
	propEvidenceMore      = "aibom.evidence."
	propMatch             = "aibom.match"
	propRootGeneric       = "aibom.root.generic"
	propRootRead          = "aibom.root.read"
	propAccelerator       = "aibom.accelerator."
)

// tier orders components by how much they are worth keeping. Truncation
// drops the lowest tier first.
type tier int

const (
	tierData tier = iota
	tierInitContainer
	tierContainer
	tierFramework
	tierModel
	tierRuntime
)

// Build encodes the document for in.
//
// Components are sorted by type, name, version and evidence locator (then by
// their full content), and identical facts (same type, name, version and
// evidence) are merged, keeping the strongest confidence. Each component's
// bom-ref is derived from that identity, so it is stable across builds.
//
// When in.MaxBytes is positive and the document is larger, Build drops
// components until it fits, in this order: data, init containers,
// containers, models, runtimes; within a tier, from the end of the sorted
// order. Result.Truncated counts the dropped components and the document
// records aibom.truncation.applied = "components-dropped:<n>". If the document
// is still too large with every component dropped, Build returns that
// smallest document together with an error wrapping ErrTooLarge.
//
// Build fails on an input it cannot represent faithfully: a subject without
// kind or name, more digests or pod images than containers, a malformed
// digest, or an image read from pods for a container that names its own.
func Build(in Input) (Result, error) {
	if in.Subject.Kind == "" || in.Subject.Name == "" {
		return Result{}, errors.New("document: subject kind and name are required")
	}
	if len(in.Digests) > len(in.Findings.Containers) {
		return Result{}, fmt.Errorf("document: %d digests for %d containers", len(in.Digests), len(in.Findings.Containers))
	}
	if len(in.Images) > len(in.Findings.Containers) {
		return Result{}, fmt.Errorf("document: %d images read from pods for %d containers", len(in.Images), len(in.Findings.Containers))
	}
	if in.MaxBytes < 0 {
		return Result{}, fmt.Errorf("document: negative MaxBytes %d", in.MaxBytes)
	}
	facts, err := collectFacts(in)
	if err != nil {
		return Result{}, err
	}
	summary := summarise(facts)

	// Components in drop order: lowest tier first, and within a tier from
	// the end of the sorted order.
	drop := make([]int, len(facts))
	for i := range drop {
		drop[i] = i
	}
	slices.SortStableFunc(drop, func(a, b int) int {
		if c := cmp.Compare(facts[a].tier, facts[b].tier); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})

	render := func(dropped int, bare bool) ([]byte, error) {
		gone := make(map[int]bool, dropped)
		for _, i := range drop[:dropped] {
			gone[i] = true
		}
		kept := make([]fact, 0, len(facts)-dropped)
		for i, f := range facts {
			if !gone[i] {
				kept = append(kept, f)
			}
		}
		return encode(in, summary.Confidence, kept, dropped, bare)
	}

	doc, err := render(0, false)
	if err != nil {
		return Result{}, err
	}
	dropped := 0
	if in.MaxBytes > 0 && len(doc) > in.MaxBytes && len(facts) > 0 {
		// The size shrinks with every component dropped (a component is far
		// longer than the digit the count may gain), so search for the
		// fewest drops that fit; all of them if nothing fits.
		lo, hi := 1, len(facts)
		for lo < hi {
			mid := lo + (hi-lo)/2
			b, err := render(mid, false)
			if err != nil {
				return Result{}, err
			}
			if len(b) <= in.MaxBytes {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		dropped = lo
		if doc, err = render(dropped, false); err != nil {
			return Result{}, err
		}
	}
	propsLeft := 0
	if in.MaxBytes > 0 && len(doc) > in.MaxBytes {
		// Even the skeleton is too large (a long roll-up list, many
		// redactions or accelerators): keep only what identifies the
		// workload and why it is reported, and say how much was left out.
		// At MinMaxBytes or more this always fits a valid workload.
		dropped = len(facts)
		if doc, err = render(dropped, true); err != nil {
			return Result{}, err
		}
		_, propsLeft = bareProperties(*metadataProperties(in, summary.Confidence, 0, false), len(in.Owned))
	}
	sum := sha256.Sum256(doc)
	res := Result{JSON: doc, SHA256: hex.EncodeToString(sum[:]), Summary: summary, Truncated: dropped, PropertiesDropped: propsLeft}
	if in.MaxBytes > 0 && len(doc) > in.MaxBytes {
		return res, fmt.Errorf("document: %d bytes, limit %d: %w", len(doc), in.MaxBytes, ErrTooLarge)
	}
	return res, nil
}

// summarise condenses the sorted facts.
func summarise(facts []fact) Summary {
	s := Summary{Confidence: adapter.Unresolved}
	best := -1
	models := map[string]bool{}
	strongest := map[claimKey]adapter.Confidence{}
	for _, f := range facts {
		switch f.tier {
		case tierContainer, tierInitContainer:
			s.Images++
		case tierModel:
			if f.component.Name != "" {
				models[f.component.Name] = true
			}
		}
		if f.tier != tierRuntime && f.tier != tierModel {
			continue
		}
		r := f.confidence.Rank()
		if r == 0 {
			continue
		}
		key := claimKey{f.tier, f.component.Name}
		if prev, ok := strongest[key]; !ok || r > prev.Rank() {
			strongest[key] = f.confidence
		}
		if f.tier == tierRuntime && r > best {
			best = r
			s.Runtime = f.component.Name
		}
	}
	// A runtime or model claimed twice (a declared backendFramework and the
	// image pattern that agrees with it) is known as well as its strongest
	// claim; the aggregate is the weakest of those.
	for _, c := range strongest {
		if s.Confidence == adapter.Unresolved || c.Rank() < s.Confidence.Rank() {
			s.Confidence = c
		}
	}
	for m := range models {
		s.Models = append(s.Models, m)
	}
	slices.Sort(s.Models)
	return s
}

// claimKey identifies a runtime or model claim for the aggregate confidence.
type claimKey struct {
	tier tier
	name string
}

// encode writes the document with the given components.
func encode(in Input, confidence adapter.Confidence, kept []fact, dropped int, bare bool) ([]byte, error) {
	components := make([]cdx.Component, len(kept))
	for i, f := range kept {
		components[i] = f.component
	}
	toolName := in.Tool.Name
	if toolName == "" {
		toolName = ToolName
	}
	sub := in.Subject
	subjectProps := []cdx.Property{
		{Name: propWorkload + "kind", Value: sub.Kind},
		{Name: propWorkload + "group", Value: sub.Group},
		{Name: propWorkload + "apiVersion", Value: sub.APIVersion},
		{Name: propWorkload + "namespace", Value: sub.Namespace},
		{Name: propWorkload + "uid", Value: sub.UID},
	}
	if sub.Generic {
		read := "true"
		if sub.Unread {
			read = "false"
		}
		subjectProps = append(subjectProps, cdx.Property{Name: propRootGeneric, Value: "true"}, cdx.Property{Name: propRootRead, Value: read})
	}
	kind := sub.Kind
	if sub.Group != "" {
		kind += "." + sub.Group
	}
	tools := []cdx.Component{{Type: cdx.ComponentTypeApplication, Name: toolName, Version: in.Tool.Version}}

	workloadRef := "aibom:workload:" + kind + "/" + sub.Namespace + "/" + sub.Name
	lifecycles := []cdx.Lifecycle{{Phase: cdx.LifecyclePhaseOperations}}
	bom := newBOM()
	bom.Metadata = &cdx.Metadata{
		Lifecycles: &lifecycles,
		Tools:      &cdx.ToolsChoice{Components: &tools},
		Component: &cdx.Component{
			BOMRef:     workloadRef,
			Type:       cdx.ComponentTypeApplication,
			Name:       sub.Name,
			Properties: &subjectProps,
		},
		Properties: metadataProperties(in, confidence, dropped, bare),
	}
	if !in.Created.IsZero() {
		bom.Metadata.Timestamp = in.Created.UTC().Format(time.RFC3339)
	}
	if len(components) > 0 {
		bom.Components = &components
	}
	deps := dependencies(workloadRef, kept)
	bom.Dependencies = &deps

	// The serial number is a name-based UUID of the document without it.
	unsigned, err := marshal(bom)
	if err != nil {
		return nil, err
	}
	bom.SerialNumber = "urn:uuid:" + uuid.NewSHA1(serialNamespace, unsigned).String()
	return marshal(bom)
}

// metadataProperties lists the document-level properties in their fixed
// order. A bare list keeps only the aggregate confidence, the roll-up's
// count and why the workload is reported (bareProperties).
func metadataProperties(in Input, confidence adapter.Confidence, dropped int, bare bool) *[]cdx.Property {
	props := []cdx.Property{
		{Name: propConfidence, Value: string(confidence)},
	}
	owned := sortedOwned(in.Owned)
	for i, o := range owned {
		if i == MaxOwnedListed {
			props = append(props,
				cdx.Property{Name: propRollupOwnedCount, Value: strconv.Itoa(len(owned))},
				cdx.Property{Name: propRollupOwnedOmit, Value: strconv.Itoa(len(owned) - MaxOwnedListed)})
			break
		}
		props = append(props, cdx.Property{Name: propRollupOwned + strconv.Itoa(i), Value: o})
	}
	for i, s := range in.Findings.Scrapers {
		p := propScrape + strconv.Itoa(i) + "."
		props = append(props,
			cdx.Property{Name: p + "scraperName", Value: s.Name},
			cdx.Property{Name: p + "scraperVersion", Value: s.Version},
			cdx.Property{Name: p + "method", Value: s.Method},
		)
	}
	props = append(props, referenceProperties(in.References)...)
	// Adapter properties sorted by name; the adapter's order is kept among
	// properties of the same name.
	extra := slices.Clone(in.Findings.Properties)
	slices.SortStableFunc(extra, func(a, b adapter.Property) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range extra {
		props = append(props, cdx.Property{Name: p.Name, Value: p.Value})
	}
	// Redactions sorted by locator, then reason, without repeats, so that the
	// order findings were merged in does not matter.
	red := slices.Clone(in.Findings.Redactions)
	slices.SortFunc(red, func(a, b adapter.Redaction) int {
		return cmp.Or(strings.Compare(a.Locator, b.Locator), strings.Compare(a.Reason, b.Reason))
	})
	red = slices.Compact(red)
	for i, r := range red {
		props = append(props, cdx.Property{Name: propRedaction + strconv.Itoa(i), Value: r.Reason + ":" + r.Locator})
	}
	// Why the workload is reported: the first AI signal of its findings.
	if reason, ok := in.Findings.Match(); ok {
		if in.Subject.Generic {
			// Reported as a generic root: say so, and by which kind, so
			// that a reader knows a profile would make it precise.
			kind := in.Subject.Kind
			if in.Subject.Group != "" {
				kind += "." + in.Subject.Group
			}
			reason = "generic-root(" + kind + "): " + reason
		}
		props = append(props, cdx.Property{Name: propMatch, Value: reason})
	} else {
		props = append(props, cdx.Property{Name: propMatch, Value: "none"})
	}
	// Accelerators, sorted by locator, without repeats.
	acc := slices.Clone(in.Findings.Accelerators)
	slices.SortFunc(acc, func(a, b adapter.Accelerator) int {
		return cmp.Or(strings.Compare(a.Evidence.Locator, b.Evidence.Locator), strings.Compare(a.Resource, b.Resource))
	})
	acc = slices.Compact(acc)
	for i, a := range acc {
		v := a.Resource
		if a.Quantity != "" {
			v += "=" + a.Quantity
		}
		props = append(props, cdx.Property{Name: propAccelerator + strconv.Itoa(i), Value: v + " " + a.Evidence.Locator})
	}
	left := 0
	if bare {
		props, left = bareProperties(props, len(in.Owned))
	}
	if dropped > 0 || bare {
		v := "components-dropped:" + strconv.Itoa(dropped)
		if bare {
			v += ",properties-dropped:" + strconv.Itoa(left)
		}
		props = append(props, cdx.Property{Name: propTruncation, Value: v})
	}
	return &props
}

// bareProperties reduces the metadata properties to the aggregate
// confidence, the roll-up's count (aibom.rollup.ownedCount and
// aibom.rollup.ownedOmitted: every owned workload omitted) and the match
// (cut to maxBareValue bytes). It returns them with the count of the
// properties left out.
func bareProperties(props []cdx.Property, owned int) ([]cdx.Property, int) {
	var out []cdx.Property
	left := 0
	for _, p := range props {
		switch p.Name {
		case propConfidence:
			out = append(out, p)
			if owned > 0 {
				out = append(out,
					cdx.Property{Name: propRollupOwnedCount, Value: strconv.Itoa(owned)},
					cdx.Property{Name: propRollupOwnedOmit, Value: strconv.Itoa(owned)})
			}
		case propMatch:
			p.Value = cutBytes(p.Value, maxBareValue)
			out = append(out, p)
		case propRollupOwnedCount, propRollupOwnedOmit:
			// Written again, with every owned workload omitted.
		default:
			left++
		}
	}
	return out, left
}

// maxBareValue bounds the match property of a bare document.
const maxBareValue = 256

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// sortedOwned returns the owned workloads ("<Kind>.<group>/<name>", or
// "<Kind>/<name>" for the core group) sorted by kind, then group, then
// name. Nothing is merged: each entry is one absorbed object, and the same
// list is the AIBOM's status.absorbed (graph.CompareOwned is the same
// order).
func sortedOwned(owned []string) []string {
	out := slices.Clone(owned)
	slices.SortFunc(out, compareOwned)
	return out
}

func compareOwned(a, b string) int {
	ak, an, _ := strings.Cut(a, "/")
	bk, bn, _ := strings.Cut(b, "/")
	akind, agroup, _ := strings.Cut(ak, ".")
	bkind, bgroup, _ := strings.Cut(bk, ".")
	return cmp.Or(strings.Compare(akind, bkind), strings.Compare(agroup, bgroup), strings.Compare(an, bn), strings.Compare(a, b))
}

// marshal encodes bom as CycloneDX 1.6 JSON.
// newBOM is an empty CycloneDX 1.6 BOM. It is built in 1.6 from the start
// and encoded as it is: the library's EncodeVersion would deep-copy every
// document (through gob) to convert it from the library's newest version,
// most of a document's build time and allocations, for fields no document
// here sets.
func newBOM() *cdx.BOM {
	bom := cdx.NewBOM()
	bom.SpecVersion = cdx.SpecVersion1_6
	bom.JSONSchema = "http://cyclonedx.org/schema/bom-1.6.schema.json"
	bom.XMLNS = "http://cyclonedx.org/schema/bom/1.6"
	return bom
}

func marshal(bom *cdx.BOM) ([]byte, error) {
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON)
	enc.SetPretty(false).SetEscapeHTML(false)
	if err := enc.Encode(bom); err != nil {
		return nil, fmt.Errorf("document: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// serialNamespace is the UUID namespace of serial numbers: the version-5 UUID
// of this project's URL in the RFC 4122 URL namespace
// (4ccb2dc5-5d15-5a97-a7a7-37f7799e829f).
var serialNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/aibom-dev/aibom#serialNumber"))
