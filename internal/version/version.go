// Package version holds the controller's version, set at build time with
// -ldflags "-X github.com/aibom-dev/aibom/internal/version.Version=v0.1.0".
package version

// Version is the controller's version; "dev" for untagged builds.
var Version = "dev"
