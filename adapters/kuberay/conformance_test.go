package kuberay_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/kuberay"
	"github.com/aibom-dev/aibom/adapters/kuberay/kuberaytest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite on every manifest in
// testdata, with the facts of kuberaytest.
func TestConformance(t *testing.T) {
	fixtures, err := kuberaytest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(kuberay.New(), fixtures...))
}
