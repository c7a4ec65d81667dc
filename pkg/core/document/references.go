package document

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// Reference is one referenced object a root's scrape looked up: a NIMCache,
// a ServingRuntime. The document lists each under aibom.reference.<i>, as
// given: the core redacts names and locators before (they come from the
// root's spec).
type Reference struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// Namespace is the root's namespace for a namespaced kind, empty for a
	// cluster-scoped one.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Locator is the root's field that named the object.
	Locator string `json:"locator"`
	// Unresolved is the reason the object could not be read (an
	// adapter.Reason* constant); empty when it was.
	Unresolved string `json:"unresolved,omitempty"`
}

// Property names of references.
const (
	propReference = "aibom.reference."
)

// referenceProperties lists the references sorted by kind, name, then
// locator, without repeats: for reference i, "aibom.reference.<i>" =
// "<Kind>/<name>", ".locator" = the root's field that named it, and
// ".state" = "resolved" or "unresolved:<reason>".
func referenceProperties(refs []Reference) []cdx.Property {
	sorted := slices.Clone(refs)
	slices.SortFunc(sorted, func(a, b Reference) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Group, b.Group), strings.Compare(a.Name, b.Name),
			strings.Compare(a.Locator, b.Locator), strings.Compare(a.Unresolved, b.Unresolved))
	})
	sorted = slices.Compact(sorted)
	var props []cdx.Property
	for i, r := range sorted {
		p := propReference + strconv.Itoa(i)
		state := "resolved"
		if r.Unresolved != "" {
			state = "unresolved:" + r.Unresolved
		}
		props = append(props,
			cdx.Property{Name: p, Value: r.Kind + "/" + r.Name},
			cdx.Property{Name: p + ".locator", Value: r.Locator},
			cdx.Property{Name: p + ".state", Value: state},
		)
	}
	return props
}
