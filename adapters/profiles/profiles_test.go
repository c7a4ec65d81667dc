package profiles_test

import (
	"path/filepath"
	"testing"

	"github.com/aibom-dev/aibom/adapters/profiles"
	"github.com/aibom-dev/aibom/pkg/adapter/profile/profiletest"
)

// TestConformance runs the adapter conformance suite over every shipped
// profile, in process, with the fixtures in testdata/<profile>: exactly as
// over a Go adapter.
func TestConformance(t *testing.T) {
	all, err := profiles.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no shipped profile")
	}
	for _, a := range all {
		t.Run(a.Name(), func(t *testing.T) {
			profiletest.Run(t, a, filepath.Join("testdata", a.Name()))
		})
	}
}
