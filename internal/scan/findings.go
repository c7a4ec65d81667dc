package scan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// Condition is a finding a CI gate can fail on ("aibom scan --fail-on").
type Condition string

// Conditions a document, or the set of roots, is checked for.
const (
	// ModelUnresolved: the root names no model it is sure of: no model at
	// all, or a model claim that is unresolved (a reference not found).
	ModelUnresolved Condition = "model-unresolved"
	// RuntimeUnresolved: the root names no serving runtime it is sure of:
	// none at all, or a runtime claim that is unresolved.
	RuntimeUnresolved Condition = "runtime-unresolved"
	// ImageUnpinned: a container image is not pinned by digest where it is
	// written (no "@sha256:<hex>" in the spec's image reference), whether
	// or not the running digest is known.
	ImageUnpinned Condition = "image-unpinned"
	// NoAISignal: a root of the input shows no AI signal (no runtime,
	// model, model storage, framework or accelerator): a manifest given
	// for an AI workload that aibom does not recognise as one.
	NoAISignal Condition = "no-ai-signal"
)

// Conditions lists every condition, in the order findings are reported.
var Conditions = []Condition{ModelUnresolved, RuntimeUnresolved, ImageUnpinned, NoAISignal}

// ParseConditions reads a list of condition names; "all" stands for every
// condition. The result is in the order of Conditions, without repeats.
func ParseConditions(names []string) ([]Condition, error) {
	want := map[Condition]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "all" {
			for _, c := range Conditions {
				want[c] = true
			}
			continue
		}
		known := false
		for _, c := range Conditions {
			if Condition(n) == c {
				want[c], known = true, true
			}
		}
		if !known {
			return nil, fmt.Errorf("unknown condition %q (known: %s, all)", n, conditionList())
		}
	}
	var out []Condition
	for _, c := range Conditions {
		if want[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

func conditionList() string {
	names := make([]string, len(Conditions))
	for i, c := range Conditions {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// Finding is one condition that holds for one root.
type Finding struct {
	Condition Condition
	// Root is the root it holds for.
	Root Root
	// Detail says what in the root makes it hold (read from the input:
	// escape it before printing, see Printable).
	Detail string
}

// Check returns the findings of conds for roots, by condition, then in
// root order. A root that shows no AI signal (Report.Unmatched: reported
// with --report all only, or left out) can only be NoAISignal; a root
// without a document (its error is reported on its own) has no findings.
func Check(roots []Root, conds []Condition) []Finding {
	var out []Finding
	for _, c := range conds {
		for _, r := range roots {
			switch {
			case r.Report.Unmatched:
				if c == NoAISignal {
					out = append(out, Finding{Condition: c, Root: r, Detail: "no runtime, model, model storage, framework or accelerator found"})
				}
			case c == NoAISignal || r.Document() == "":
			default:
				for _, d := range check(c, r) {
					out = append(out, Finding{Condition: c, Root: r, Detail: d})
				}
			}
		}
	}
	return out
}

// bomComponents is what Check reads of a document.
type bomComponents struct {
	Components []struct {
		Type       string `json:"type"`
		Name       string `json:"name"`
		Version    string `json:"version"`
		Properties []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"properties"`
	} `json:"components"`
}

// check returns what makes c hold for r's document, nothing when it does
// not hold.
func check(c Condition, r Root) []string {
	var bom bomComponents
	if err := json.Unmarshal([]byte(r.Document()), &bom); err != nil {
		return []string{"document unreadable: " + err.Error()}
	}
	switch c {
	case ModelUnresolved, RuntimeUnresolved:
		types, what := []string{"machine-learning-model"}, "model"
		if c == RuntimeUnresolved {
			// A serving runtime is an application component (vllm) or a
			// platform (nim, dynamo); the workload itself is
			// metadata.component.
			types, what = []string{"application", "platform"}, "runtime"
		}
		var out []string
		claims := 0
		for _, comp := range bom.Components {
			if !slices.Contains(types, comp.Type) {
				continue
			}
			claims++
			for _, p := range comp.Properties {
				if p.Name == "aibom.confidence" && p.Value == string(adapter.Unresolved) {
					out = append(out, fmt.Sprintf("%s %s is unresolved", what, comp.Name))
				}
			}
		}
		if claims == 0 {
			out = append(out, "no "+what+" found")
		}
		return out
	case ImageUnpinned:
		var out []string
		for _, comp := range bom.Components {
			if comp.Type != "container" {
				continue
			}
			// aibom.image.pinned says every reference the spec writes
			// names its digest; an image read from pods is not written.
			pinned, fromPods, invalid := false, false, false
			for _, p := range comp.Properties {
				switch p.Name {
				case "aibom.image.pinned":
					pinned = p.Value == "true"
				case "aibom.image.fromPods":
					fromPods = p.Value == "true"
				case "aibom.image.invalid":
					invalid = p.Value == "true" // named as written
				}
			}
			switch {
			case fromPods:
				out = append(out, fmt.Sprintf("image %s is not written in the spec (read from the pods)", comp.Name))
			case !pinned:
				image := comp.Name
				if comp.Version != "" && !invalid {
					image += ":" + comp.Version
				}
				out = append(out, fmt.Sprintf("image %s is not pinned by digest", image))
			}
		}
		return out
	}
	return nil
}
