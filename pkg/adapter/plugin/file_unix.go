//go:build unix

package plugin

import (
	"io/fs"
	"os"
	"syscall"
)

// ownerOf returns the user id that owns the file info describes.
func ownerOf(info fs.FileInfo) (int, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// effectiveUID returns the controller's user, which a plugin file may
// belong to besides root (a variable for tests).
var effectiveUID = os.Geteuid
