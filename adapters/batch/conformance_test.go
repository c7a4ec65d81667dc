package batch_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/adapters/batch/batchtest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite on the fixtures of
// batchtest.
func TestConformance(t *testing.T) {
	fixtures, err := batchtest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(batch.New(), fixtures...))
}
