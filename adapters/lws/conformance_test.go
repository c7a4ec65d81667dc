package lws_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/lws"
	"github.com/aibom-dev/aibom/adapters/lws/lwstest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite on every manifest in
// testdata, with the facts of lwstest.
func TestConformance(t *testing.T) {
	fixtures, err := lwstest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(lws.New(), fixtures...))
}
