package grove_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/grove"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite. Every Grove kind is
// walk-only, so there is no fixture: the suite checks the declarations and
// that Scrape refuses every Grove kind (and an undeclared one).
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.NewHarness(grove.New()),
		conformance.WalkOnly("Grove's kinds only connect a PodCliqueSet's owner (a DynamoGraphDeployment) to its pods; "+
			"the owner's adapter reads the images from its own spec"))
}
