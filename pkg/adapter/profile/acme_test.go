package profile_test

import (
	"testing"

	"github.com/aibom-dev/aibom/pkg/adapter/profile"
	"github.com/aibom-dev/aibom/pkg/adapter/profile/profiletest"
)

// The acme profile (name patterns, an init container, a framework, a
// flag-aware model read) passes the conformance suite with its fixtures.
func TestAcmeProfileConformance(t *testing.T) {
	a, err := profile.Load("testdata/acme/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	profiletest.Run(t, a[0], "testdata/acme-fixtures")
}
