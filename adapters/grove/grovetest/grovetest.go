// Package grovetest holds the conformance fixtures and options of the grove
// adapter, in the style of net/http/httptest: the adapter's own conformance
// test and the run of the suite over the plugin transport (pkg/adapter/plugin)
// share them, so each is written once.
package grovetest

import "github.com/aibom-dev/aibom/pkg/adapter/conformance"

// Fixtures returns the adapter's conformance fixtures: none, for every Grove
// kind is walk-only. The suite checks the declarations and that Scrape
// refuses every Grove kind (and an undeclared one).
func Fixtures() ([]conformance.Fixture, error) { return nil, nil }

// Options returns the options of the adapter's conformance runs.
func Options() []conformance.Option {
	return []conformance.Option{
		conformance.WalkOnly("Grove's kinds only connect a PodCliqueSet's owner (a DynamoGraphDeployment) to its pods; " +
			"the owner's adapter reads the images from its own spec"),
	}
}
