package manifest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	yaml "go.yaml.in/yaml/v3"
)

// Limits bound what reading manifests may cost. The zero value is
// DefaultLimits.
type Limits struct {
	// MaxFileBytes caps one file; MaxTotalBytes all files together.
	MaxFileBytes, MaxTotalBytes int64
	// MaxExpansion caps how many times larger than its text a document may
	// grow once YAML aliases are expanded (a "billion laughs" document).
	MaxExpansion int64
}

// DefaultLimits are generous for real manifests: 32 MiB a file, 256 MiB in
// all, aliases expanding a document at most 16 times (and by at least 1 MiB).
var DefaultLimits = Limits{MaxFileBytes: 32 << 20, MaxTotalBytes: 256 << 20, MaxExpansion: 16}

// ErrLimit is wrapped by every error a limit raises.
var ErrLimit = errors.New("input limit")

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultLimits.MaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultLimits.MaxTotalBytes
	}
	if l.MaxExpansion <= 0 {
		l.MaxExpansion = DefaultLimits.MaxExpansion
	}
	return l
}

// readFile reads a regular file of at most max bytes: a device, a FIFO or a
// directory given as a file is refused (os.ReadFile on /dev/zero never
// ends), and so is a larger file, before it is read whole.
func readFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): %w", path, describeMode(info.Mode()), ErrLimit)
	}
	if info.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, over the limit of %d bytes per file: %w", path, info.Size(), max, ErrLimit)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over the limit of %d bytes per file: %w", path, max, ErrLimit)
	}
	return data, nil
}

// readStream reads a stream (standard input) of at most max bytes.
func readStream(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", StdinName, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over the limit of %d bytes per file: %w", StdinName, max, ErrLimit)
	}
	return data, nil
}

// aliasUse finds a YAML alias ("*name") in a document.
var aliasUse = regexp.MustCompile(`(^|[\s\[,{:-])\*[^\s\[\]{},]+`)

// checkAliases refuses a document whose aliases would expand it beyond
// limit bytes. Documents without aliases are not parsed twice.
func checkAliases(text string, limit int64) error {
	if !aliasUse.MatchString(text) {
		return nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		return nil // the real decoder reports it, with a position
	}
	memo := map[*yaml.Node]int64{}
	var size func(n *yaml.Node, depth int) int64
	size = func(n *yaml.Node, depth int) int64 {
		if n == nil || depth > 10000 {
			return 0
		}
		if s, ok := memo[n]; ok {
			return s
		}
		memo[n] = 0 // a cycle adds nothing
		s := int64(len(n.Value)) + 2
		if n.Kind == yaml.AliasNode {
			s += size(n.Alias, depth+1)
		}
		for _, c := range n.Content {
			s += size(c, depth+1)
			if s > limit {
				break
			}
		}
		memo[n] = s
		return s
	}
	if s := size(&root, 0); s > limit {
		return fmt.Errorf("YAML aliases expand the document beyond %d bytes: %w", limit, ErrLimit)
	}
	return nil
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
