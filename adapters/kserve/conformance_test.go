package kserve_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/kserve"
	"github.com/aibom-dev/aibom/adapters/kserve/kservetest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite on every manifest in
// testdata, with the facts of kservetest.
func TestConformance(t *testing.T) {
	fixtures, err := kservetest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(kserve.New(), fixtures...))
}
