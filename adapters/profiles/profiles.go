// Package profiles holds the declarative adapters (profiles) shipped with
// aibom: one YAML file per operator in embedded/, compiled into both
// binaries and enabled by default like the in-tree Go adapters. Each
// profile's conformance fixtures are in testdata/<profile>/.
package profiles

import (
	"embed"
	"fmt"
	"io/fs"
	"sync"

	"github.com/aibom-dev/aibom/pkg/adapter/profile"
)

//go:embed embedded/*.yaml
var files embed.FS

var (
	once     sync.Once
	compiled []*profile.Adapter
	loadErr  error
)

// All returns the shipped profiles, compiled, sorted by name. They are
// compiled once; an error means a shipped profile is broken (a test
// catches it before release).
func All() ([]*profile.Adapter, error) {
	once.Do(func() {
		sub, err := fs.Sub(files, "embedded")
		if err != nil {
			loadErr = err
			return
		}
		compiled, loadErr = profile.LoadFS(sub, "embedded:")
		if loadErr != nil {
			loadErr = fmt.Errorf("shipped adapter profiles: %w", loadErr)
		}
	})
	return compiled, loadErr
}

// Files returns the shipped profile files, for "aibom adapters" and docs.
func Files() fs.FS {
	sub, _ := fs.Sub(files, "embedded")
	return sub
}
