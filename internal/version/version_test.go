package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "dev"},
		{"module download", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, true, "v0.1.0"},
		{"pseudo-version from a VCS checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20260101000000-0123456789ab"}}, true, "v0.1.1-0.20260101000000-0123456789ab"},
		{"devel with revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "false")}, true, "0123456789ab"},
		{"devel with dirty tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "true")}, true, "0123456789ab-dirty"},
		{"devel without VCS", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, fromBuildInfo(tc.bi, tc.ok))
		})
	}
}

func TestVersionIsNeverEmpty(t *testing.T) {
	require.NotEmpty(t, Version)
}
