// Package version holds the one version string of the project's binaries.
//
// Release builds stamp it from the repository's VERSION file (make build,
// make image):
//
//	-ldflags "-X github.com/aibom-dev/aibom/internal/version.Version=$(cat VERSION)"
//
// A build without the stamp (go install, go run, go build) falls back to what
// the Go toolchain recorded in the binary: the module version when built
// from a module download (go install ...@v0.1.0), otherwise the VCS revision,
// and "dev" when neither is known. The controller's --version, "aibom
// version", every document's tool component and the image's version label all
// read this one value; the Helm chart's appVersion is VERSION too
// (test/release checks that they agree).
package version

import "runtime/debug"

// Version is the binaries' version. Set at link time with -X; when unset,
// init fills it in from the build information.
var Version string

func init() {
	if Version == "" {
		bi, ok := debug.ReadBuildInfo()
		Version = fromBuildInfo(bi, ok)
	}
}

// fromBuildInfo derives a version when none was stamped: the main module's
// version if the toolchain knows one, else the VCS revision (12 hex digits,
// "-dirty" when the tree had local changes), else "dev".
func fromBuildInfo(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if revision == "" {
		return "dev"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if dirty {
		revision += "-dirty"
	}
	return revision
}
