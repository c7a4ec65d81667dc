package podtemplate

import (
	"slices"
	"testing"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// Every name the catalogue can put into a finding is one of the canonical
// names package adapter exports, so that adapters naming a runtime their
// kind implies and the scraper reading a pod template agree.
func TestCatalogueUsesTheExportedNames(t *testing.T) {
	runtimes := append(adapter.RuntimeNames(), adapter.PlatformNames()...)
	check := func(what, name string, names []string) {
		t.Helper()
		if name != "" && !slices.Contains(names, name) {
			t.Errorf("%s %q is not an exported canonical name", what, name)
		}
	}
	for _, r := range imageRules {
		check("image rule runtime", r.runtime, runtimes)
		check("image rule engine", r.engine, adapter.RuntimeNames())
		if r.platform {
			check("image rule platform", r.runtime, adapter.PlatformNames())
		}
	}
	for _, r := range nameRules {
		check("name rule runtime", r.runtime, runtimes)
	}
	for _, r := range programRules {
		check("program rule runtime", r.runtime, runtimes)
		check("program rule engine", r.engine, adapter.RuntimeNames())
		check("program rule framework", r.framework, adapter.FrameworkNames())
	}
	for _, r := range envPrefixRules {
		check("env prefix rule runtime", r.runtime, runtimes)
	}
	for _, list := range [][]string{adapter.RuntimeNames(), adapter.PlatformNames(), adapter.FrameworkNames()} {
		if !slices.IsSorted(list) || len(slices.Compact(slices.Clone(list))) != len(list) {
			t.Errorf("%q is not sorted and distinct", list)
		}
	}
}
