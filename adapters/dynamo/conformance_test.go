package dynamo_test

import (
	"testing"

	"github.com/aibom-dev/aibom/adapters/dynamo"
	"github.com/aibom-dev/aibom/adapters/dynamo/dynamotest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// TestConformance runs the adapter conformance suite on every manifest in
// testdata, with the facts and options of dynamotest.
func TestConformance(t *testing.T) {
	fixtures, err := dynamotest.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(dynamo.New(), fixtures...), dynamotest.Options()...)
}
