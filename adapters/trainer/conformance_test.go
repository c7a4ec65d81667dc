package trainer_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/trainer"
	"github.com/aibom-dev/aibom/adapters/trainer/trainertest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite on every manifest in
// testdata, with the facts of trainertest.
func TestConformance(t *testing.T) {
	fixtures, err := trainertest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(trainer.New(), fixtures...))
}
