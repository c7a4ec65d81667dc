package nim_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/nim"
	"github.com/aibom-dev/aibom/adapters/nim/nimtest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite on every manifest in
// testdata, with the facts of nimtest.
func TestConformance(t *testing.T) {
	fixtures, err := nimtest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(nim.New(), fixtures...))
}
