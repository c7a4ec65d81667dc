// Command image builds the controller's container image without a
// container engine, reproducibly, and its SBOM.
//
//	image build -root . -repository ghcr.io/aibom-dev/aibom-controller -out _out/image
//	image sbom  -layout _out/image -out _out/image/sbom.cdx.json
//	image provenance -layout _out/image -root . -out _out/image/provenance.intoto.json
//
// build compiles the controller statically (CGO_ENABLED=0, -trimpath, no
// build ID) for linux/amd64 and linux/arm64 as "go install
// .../cmd/controller@VERSION" would, from a module zip of the checkout
// served by a local GOPROXY (module.go), so that the build information
// names the release version; lays each binary on an empty base with a CA
// bundle and the nonroot user 65532, writes the multi-platform index as an
// OCI image layout, and prints its digest. Every timestamp is the commit's
// (or SOURCE_DATE_EPOCH): the same commit gives the same digest. Nothing is pulled or pushed; push
// with `crane push _out/image REF` (docs/release.md).
//
// sbom writes a CycloneDX 1.6 SBOM of the image in the layout: the index
// and each platform's image by digest, the controller binary of each, and
// the Go modules and toolchain compiled into it (read from the binaries'
// build information).
//
// provenance writes an in-toto Statement with an SLSA v1 provenance
// predicate for the index digest (provenance.go): the builder, the
// commit, the module zip and every Go module compiled in (with their
// go.sum hashes), the files next to the binary, and the SBOM as a
// byproduct. Unsigned: a release signs it (docs/release.md).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|sbom|provenance [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(os.Args[2:])
	case "sbom":
		err = runSBOM(os.Args[2:])
	case "provenance":
		err = runProvenance(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (build, sbom, provenance)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// binDirName is where build keeps the binaries, next to the layout, for sbom.
const binDirName = "binaries"

func runBuild(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	version := fs.String("version", "", "the version to stamp (default: the repository's VERSION file)")
	repository := fs.String("repository", "ghcr.io/aibom-dev/aibom-controller", "repository the image is meant for")
	out := fs.String("out", "_out/image", "directory of the OCI image layout")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated OS/arch list")
	root := fs.String("root", ".", "repository root (the controller's module)")
	pkg := fs.String("package", "./cmd/controller", "main package to build, relative to root")
	_ = fs.Parse(args)
	if *version == "" {
		v, err := readVERSION(*root)
		if err != nil {
			return err
		}
		*version = v
	}
	// go build runs in root: every path it is given must be absolute.
	absOut, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	*out = absOut
	revision, created, err := commit(*root)
	if err != nil {
		return err
	}
	license, err := os.ReadFile(filepath.Join(*root, "LICENSE"))
	if err != nil {
		return err
	}
	binDir := sibling(*out, binDirName)
	src, err := writeModuleProxy(sibling(*out, "module"), *root, *version, created)
	if err != nil {
		return err
	}
	if tag, _ := tagOf(*root, *version); !tag {
		fmt.Fprintf(os.Stderr, "image: note: %s is not the checkout's tag %s: the binaries say %s (VERSION) in their build information, and the image's revision label says what was built\n", revision, *version, *version)
	}
	modCache := sibling(*out, "modcache")
	if err := evictModule(modCache, src.Path); err != nil {
		return err
	}
	binaries := map[Platform]string{}
	for _, p := range strings.Split(*platforms, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok {
			return fmt.Errorf("platform %q: want OS/arch", p)
		}
		plat := Platform{osName, arch}
		bin := filepath.Join(binDir, osName+"-"+arch, "aibom-controller")
		if err := compileModule(src, *pkg, plat, modCache, bin); err != nil {
			return err
		}
		binaries[plat] = bin
	}
	idx, err := BuildIndex(ImageOptions{Version: *version, Repository: *repository, Revision: revision, Created: created, Binaries: binaries, License: license})
	if err != nil {
		return err
	}
	ref := *repository + ":" + *version
	if err := WriteLayout(*out, idx, ref); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "digest"), []byte(digest.String()+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Printf("image %s (%s, built from %s)\n", ref, *platforms, revision)
	fmt.Printf("digest %s\n", digest)
	fmt.Printf("layout %s\n", *out)
	return nil
}

// readVERSION is the repository's one version (the file VERSION).
func readVERSION(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(data))
	if v == "" {
		return "", fmt.Errorf("%s/VERSION is empty", root)
	}
	return v, nil
}

// sibling is the directory next to out named <out>-<name> (_out/image-binaries).
func sibling(out, name string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(out)), filepath.Base(out)+"-"+name)
}

// tagOf reports whether the checkout's HEAD is tagged version and clean.
func tagOf(root, version string) (bool, error) {
	cmd := exec.Command("git", "describe", "--tags", "--exact-match", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == version, nil
}

// commit is the checked-out revision and the time every timestamp of the
// image takes: SOURCE_DATE_EPOCH when set, else the commit's time.
func commit(root string) (string, time.Time, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	revision, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", time.Time{}, err
	}
	if status, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && status != "" {
		revision += "-dirty"
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git("log", "-1", "--format=%ct"); err != nil {
			return "", time.Time{}, err
		}
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("commit time %q: %w", epoch, err)
	}
	return revision, time.Unix(secs, 0).UTC(), nil
}
