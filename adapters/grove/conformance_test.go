package grove_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/grove"
	"github.com/aibom-dev/aibom/adapters/grove/grovetest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite. Every Grove kind is
// walk-only, so there is no fixture: the suite checks the declarations and
// that Scrape refuses every Grove kind (and an undeclared one).
func TestConformance(t *testing.T) {
	fixtures, err := grovetest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(grove.New(), fixtures...), grovetest.Options()...)
}
