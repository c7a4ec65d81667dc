package apps_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/apps/appstest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite on the fixtures of
// appstest.
func TestConformance(t *testing.T) {
	fixtures, err := appstest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(apps.New(), fixtures...))
}
