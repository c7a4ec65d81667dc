package core

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The core's parts import one way: the reconcile loop and the watches both
// build on the ownership graph (and its Store interface), and neither
// imports the other; the graph imports neither. Only Setup, in this
// package, wires them together.
func TestCorePackagesImportOneWay(t *testing.T) {
	const module = "github.com/aibom-dev/aibom/pkg/core/"
	forbidden := map[string][]string{
		"graph":     {"watch", "reconcile", "digest", "document"},
		"watch":     {"reconcile"},
		"reconcile": {"watch"},
	}
	for pkg, never := range forbidden {
		p, err := build.ImportDir(filepath.Join(".", pkg), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		if len(p.GoFiles) == 0 {
			t.Fatalf("%s: no Go files", pkg)
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			if first, _, _ := strings.Cut(strings.TrimPrefix(imp, module), "/"); slices.Contains(never, first) {
				t.Errorf("pkg/core/%s imports %s: the core's parts import one way (reconcile -> graph <- watch)", pkg, imp)
			}
		}
	}
}
