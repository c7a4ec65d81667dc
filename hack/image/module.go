package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// The binaries are built the way "go install <module>/cmd/controller@v0.1.0"
// builds a published release: from a module zip at the release version,
// not from a directory. Only then does the Go toolchain record the main
// module's version in the build information ("go version -m", and what
// trivy, syft and govulncheck read); a build in the checkout records
// "(devel)" whatever -ldflags say. The zip is made here from the checkout
// and served by a file-system GOPROXY, so nothing is fetched and nothing is
// published: its h1: hash (in the build information too) is the hash the
// checksum database will hold for that version once the tag is pushed,
// when the tag names the commit built.

// sourceModule is the module the binaries are built from.
type sourceModule struct {
	// Path is the module path, read from root/go.mod.
	Path string
	// Version is the version it is served at (VERSION).
	Version string
	// Proxy is the directory of the file-system GOPROXY serving it.
	Proxy string
}

// writeModuleProxy lays out a GOPROXY in dir (replacing what was there)
// serving root's module at version: the files git tracks, as they are in
// the working tree (so a clean tree is exactly the commit; untracked
// files never reach a binary), without the nested modules (hack/image,
// examples/ollama ...), as the go command zips a module.
func writeModuleProxy(dir, root, version string, created time.Time) (sourceModule, error) {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return sourceModule{}, err
	}
	modPath := modfile.ModulePath(gomod)
	if modPath == "" {
		return sourceModule{}, fmt.Errorf("%s/go.mod names no module", root)
	}
	m := module.Version{Path: modPath, Version: version}
	if err := module.Check(m.Path, m.Version); err != nil {
		return sourceModule{}, fmt.Errorf("version %q of %s: %w", version, modPath, err)
	}
	files, err := trackedFiles(root)
	if err != nil {
		return sourceModule{}, err
	}
	escaped, err := module.EscapePath(modPath)
	if err != nil {
		return sourceModule{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return sourceModule{}, err
	}
	at := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return sourceModule{}, err
	}
	var zip bytes.Buffer
	if err := modzip.Create(&zip, m, files); err != nil {
		return sourceModule{}, fmt.Errorf("module zip: %w", err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, created.UTC()})
	if err != nil {
		return sourceModule{}, err
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
		version + ".zip":  zip.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return sourceModule{}, err
		}
	}
	return sourceModule{Path: modPath, Version: version, Proxy: dir}, nil
}

// trackedFiles lists the regular files git tracks under root that exist in
// the working tree.
func trackedFiles(root string) ([]modzip.File, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []modzip.File
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted, not yet committed
		}
		if err != nil {
			return nil, err
		}
		files = append(files, treeFile{slash: name, path: p, info: info})
	}
	return files, nil
}

// treeFile is a working-tree file of the module zip.
type treeFile struct {
	slash, path string
	info        fs.FileInfo
}

func (f treeFile) Path() string                 { return f.slash }
func (f treeFile) Lstat() (fs.FileInfo, error)  { return f.info, nil }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }

// compileModule builds the static binary of package pkg ("./cmd/controller",
// relative to the module root) of m for a platform into out, with "go
// install pkg@version" from m's proxy: -trimpath, no build ID, the version
// also stamped with -X (the binaries' --version). modCache is the module
// cache of the build, a directory of its own: the system cache must never
// hold a version of this module that is not the published one. The
// dependencies come from the system cache's downloads (no network), else
// from GOPROXY.
func compileModule(m sourceModule, pkg string, p Platform, modCache, out string) error {
	target := m.Path
	if rel := path.Clean(filepath.ToSlash(pkg)); rel != "." {
		target += "/" + rel
	}
	gopath, err := os.MkdirTemp("", "aibom-image-gopath-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(gopath)
	proxies := []string{"file://" + filepath.ToSlash(m.Proxy)}
	if system, err := goEnv("GOMODCACHE"); err == nil && system != "" && system != modCache {
		proxies = append(proxies, "file://"+filepath.ToSlash(filepath.Join(system, "cache", "download")))
	}
	if up, err := goEnv("GOPROXY"); err == nil && up != "" && up != "off" {
		proxies = append(proxies, up)
	}
	cmd := exec.Command("go", "install", "-trimpath", "-ldflags", linkFlags(m.Path, m.Version), target+"@"+m.Version)
	cmd.Dir = gopath // outside any module: the version's own go.mod rules
	cmd.Env = append(withoutEnv(os.Environ(), "GOBIN", "GOFLAGS", "GOWORK", "GOPATH", "GOMODCACHE", "GOPROXY", "GONOSUMDB", "GOPRIVATE"),
		"CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOWORK=off",
		"GOPATH="+gopath, "GOMODCACHE="+modCache, "GOFLAGS=-modcacherw",
		"GOPROXY="+strings.Join(proxies, ","),
		// Not published yet: the checksum database cannot know it. Its
		// dependencies are checked against its go.sum as always.
		"GONOSUMDB="+m.Path)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go install %s@%s for %s: %w", target, m.Version, p, err)
	}
	// go install writes bin/<name>, or bin/<os>_<arch>/<name> when cross
	// compiling.
	name := path.Base(target)
	built := filepath.Join(gopath, "bin", p.OS+"_"+p.Arch, name)
	if _, err := os.Stat(built); err != nil {
		built = filepath.Join(gopath, "bin", name)
	}
	data, err := os.ReadFile(built)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o755)
}

// linkFlags are the binaries' -ldflags: no symbol table, no DWARF, no
// build ID, the version stamped. The toolchain leaves -ldflags out of the
// build information of a -trimpath build, so the provenance says them.
func linkFlags(modPath, version string) string {
	return "-s -w -buildid= -X " + modPath + "/internal/version.Version=" + version
}

// evictModule removes every version of modPath from a build's module
// cache: the next build serves the checkout again, not what was cached.
func evictModule(modCache, modPath string) error {
	escaped, err := module.EscapePath(modPath)
	if err != nil {
		return err
	}
	dir, base := path.Split(escaped)
	entries, err := os.ReadDir(filepath.Join(modCache, filepath.FromSlash(dir)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base+"@") {
			if err := os.RemoveAll(filepath.Join(modCache, filepath.FromSlash(dir), e.Name())); err != nil {
				return err
			}
		}
	}
	return os.RemoveAll(filepath.Join(modCache, "cache", "download", filepath.FromSlash(escaped)))
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	return strings.TrimSpace(string(out)), err
}

// withoutEnv drops the named variables from env.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			if k == n {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
