package plugin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// copyPlugin copies the binary at src to dir/name with mode, and returns
// the copy's path.
func copyPlugin(t *testing.T, src, dir, name string, mode os.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
	// WriteFile applies the umask; the test wants the mode as written.
	if err := os.Chmod(dst, mode); err != nil {
		t.Fatal(err)
	}
	return dst
}

// foreignOwned makes path belong to someone who is neither root nor the
// controller's user: chown to nobody as root; otherwise the file stays the
// test's own and the checks are told the controller runs as another user.
func foreignOwned(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Cleanup(plugin.PretendControllerUID(os.Geteuid() + 1))
}

// Plugin files that someone else could have written are refused, with the
// file and the reason; a good file still loads.
func TestUnsafePluginFilesAreRefused(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  []string
	}{
		{"symlink", func(t *testing.T, dir string) string {
			target := copyPlugin(t, bin, dir, "real", 0o755)
			link := filepath.Join(dir, "link")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, []string{"is a symbolic link", "real"}},
		{"world-writable", func(t *testing.T, dir string) string {
			return copyPlugin(t, bin, dir, "flaky", 0o757)
		}, []string{"is world-writable (mode -rwxr-xrwx)"}},
		{"group-writable", func(t *testing.T, dir string) string {
			return copyPlugin(t, bin, dir, "flaky", 0o775)
		}, []string{"is group-writable (mode -rwxrwxr-x)"}},
		{"foreign-owned", func(t *testing.T, dir string) string {
			p := copyPlugin(t, bin, dir, "flaky", 0o755)
			foreignOwned(t, p)
			return p
		}, []string{"is owned by user id", "neither root nor the controller's user"}},
		{"not executable", func(t *testing.T, dir string) string {
			return copyPlugin(t, bin, dir, "flaky", 0o644)
		}, []string{"is not executable"}},
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "sub")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, []string{"is not a regular file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t, t.TempDir())
			_, err := plugin.Open(path)
			mustContain(t, err, append([]string{"adapter plugin " + path + " "}, tc.want...)...)
			t.Logf("%s: %v", tc.name, err)
		})
	}

	// Files the checks accept: the controller's own or root's, 0755 or
	// 0700.
	for _, mode := range []os.FileMode{0o755, 0o700, 0o555} {
		c, err := plugin.Open(copyPlugin(t, bin, t.TempDir(), "flaky", mode))
		if err != nil {
			t.Fatalf("mode %s: %v", mode, err)
		}
		scrapeOK(t, c)
		_ = c.Close()
	}
}

// A directory with a symbolic link or a world-writable file is refused
// naming the file; alone, the good plugin loads.
func TestOpenDirRefusesUnsafeFiles(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	dir := t.TempDir()
	good := copyPlugin(t, bin, dir, "flaky", 0o755)
	link := filepath.Join(dir, "also-flaky")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	_, err := plugin.OpenDir(dir)
	mustContain(t, err, link, "is a symbolic link")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}

	open := copyPlugin(t, bin, dir, "zz-open", 0o777)
	_, err = plugin.OpenDir(dir)
	mustContain(t, err, open, "is world-writable")
	if err := os.Remove(open); err != nil {
		t.Fatal(err)
	}

	clients, err := plugin.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(clients) != 1 {
		t.Fatalf("OpenDir opened %d plugins, want 1", len(clients))
	}
	scrapeOK(t, clients[0])
	_ = clients[0].Close()
}

func TestSplitChecksum(t *testing.T) {
	hexSum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		arg, path, sum, err string
	}{
		{arg: "/plugins/kserve", path: "/plugins/kserve"},
		{arg: "/plugins/kserve@v2", path: "/plugins/kserve@v2"},
		{arg: "/plugins/kserve@sha256:" + hexSum, path: "/plugins/kserve", sum: hexSum},
		{arg: "/a@b/kserve@sha256:" + hexSum, path: "/a@b/kserve", sum: hexSum},
		{arg: "/plugins/kserve@sha256:abc", err: "64 hexadecimal digits"},
		{arg: "/plugins/kserve@sha256:" + strings.Repeat("zz", 32), err: "64 hexadecimal digits"},
		{arg: "@sha256:" + hexSum, err: "no path"},
	} {
		path, sum, err := plugin.SplitChecksum(tc.arg)
		if tc.err != "" {
			mustContain(t, err, tc.err)
			continue
		}
		if err != nil || path != tc.path || hex.EncodeToString(sum) != tc.sum {
			t.Errorf("SplitChecksum(%q) = %q, %x, %v; want %q, %s", tc.arg, path, sum, err, tc.path, tc.sum)
		}
	}
}

func fileSum(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return s[:]
}

// A pinned checksum is checked at start and at every restart: a binary
// replaced while the controller runs is not restarted.
func TestPinnedChecksum(t *testing.T) {
	bin := copyPlugin(t, buildPlugin(t, "flaky"), t.TempDir(), "flaky", 0o755)
	sum := fileSum(t, bin)

	wrong := sha256.Sum256([]byte("another plugin"))
	_, err := plugin.Open(bin, plugin.SHA256(wrong[:]))
	mustContain(t, err, "adapter plugin "+bin, "has SHA-256 "+hex.EncodeToString(sum), "not the pinned "+hex.EncodeToString(wrong[:]), "refusing to start it")

	c, err := plugin.Open(bin, plugin.SHA256(sum), plugin.Backoff(50*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	scrapeOK(t, c)
	// A restart checks again (with a fresh hash).
	_, err = c.Scrape(context.Background(), widget("crash"))
	mustContain(t, err, "crashed")
	waitUntilUp(t, c, 5*time.Second)

	// Replace the binary (rename over it, as an installer would), then
	// crash the plugin: the restart is refused.
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	tmp := bin + ".new"
	if err := os.WriteFile(tmp, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	_, err = c.Scrape(context.Background(), widget("crash"))
	mustContain(t, err, "crashed")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err = c.Scrape(context.Background(), widget("ok"))
		if err == nil {
			t.Fatal("a replaced binary was restarted despite the pinned checksum")
		}
		if strings.Contains(err.Error(), "restart failed") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustContain(t, err, "restart failed", "not the pinned "+hex.EncodeToString(sum))
}
