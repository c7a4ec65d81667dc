package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// ChecksumSeparator joins a plugin path and its pinned checksum in a
// --adapter-plugin argument: PATH@sha256:<64 hex digits>.
const ChecksumSeparator = "@sha256:"

// SplitChecksum splits a --adapter-plugin argument into the plugin's path
// and, when the argument ends in "@sha256:<hex>", the pinned SHA-256 of the
// binary (nil when none is pinned). A malformed checksum is an error, never
// read as part of the path.
func SplitChecksum(arg string) (path string, sum []byte, err error) {
	i := strings.LastIndex(arg, ChecksumSeparator)
	if i < 0 {
		return arg, nil, nil
	}
	path, digits := arg[:i], arg[i+len(ChecksumSeparator):]
	if path == "" {
		return "", nil, fmt.Errorf("%q: no path before %q", arg, ChecksumSeparator)
	}
	sum, err = hex.DecodeString(digits)
	if err != nil || len(sum) != sha256.Size {
		return "", nil, fmt.Errorf("%q: the checksum after %q must be %d hexadecimal digits (the output of sha256sum)", arg, ChecksumSeparator, 2*sha256.Size)
	}
	return path, sum, nil
}

// OpenArg starts the plugin an --adapter-plugin argument names: PATH, or
// PATH@sha256:<hex> to pin the binary's SHA-256 (SplitChecksum). The
// controller and the aibom CLI both read the flag with it, so that one
// argument means the same to both.
func OpenArg(arg string, opts ...Option) (*Client, error) {
	p, sum, err := SplitChecksum(arg)
	if err != nil {
		return nil, err
	}
	if sum != nil {
		opts = append(opts[:len(opts):len(opts)], SHA256(sum))
	}
	return Open(p, opts...)
}

// checkPluginFile refuses a plugin file that someone other than the
// controller's user (or root) could have put there or changed: the host runs
// what it finds with its own identity and credentials. The file must be
// a regular file (not a symbolic link: its target can change under the
// controller), executable, owned by the controller's effective user or by
// root, and neither group- nor world-writable. The error says why; the
// caller names the file.
func checkPluginFile(path string, euid int) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	mode := info.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Errorf("is a symbolic link (to %q); a plugin must be a regular file: name the target itself", target)
	case !mode.IsRegular():
		return fmt.Errorf("is not a regular file (mode %s)", mode)
	case mode.Perm()&0o111 == 0:
		return fmt.Errorf("is not executable (mode %s)", mode.Perm())
	case mode.Perm()&0o002 != 0:
		return fmt.Errorf("is world-writable (mode %s): anyone could replace the code the controller runs; chmod o-w it", mode.Perm())
	case mode.Perm()&0o020 != 0:
		return fmt.Errorf("is group-writable (mode %s): the group's members could replace the code the controller runs; chmod g-w it", mode.Perm())
	}
	if uid, ok := ownerOf(info); ok && uid != 0 && uid != euid {
		return fmt.Errorf("is owned by user id %d, neither root nor the controller's user (%d): chown it to one of them", uid, euid)
	}
	return nil
}

// fileSHA256 returns the SHA-256 of a file, for error messages.
func fileSHA256(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}
