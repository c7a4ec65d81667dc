package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

var platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}}

// standInVersion is the module version stand-ins are built at (a v9 would
// need the module path to end in /v9).
const standInVersion = "v0.9.9"

// standIn compiles a small static program for every platform into dir
// (<os>-<arch>/aibom-controller, as build lays binaries out) the way build
// compiles the controller (a module zip at v0.9.9 from a git checkout,
// served by a file-system GOPROXY, go install): the controller itself
// takes minutes to cross-compile, the image assembly is what these tests
// are about.
func standIn(t *testing.T, dir string) map[Platform]string {
	t.Helper()
	src := standInSource(t, `func main() { fmt.Println("stand-in") }`)
	m, err := writeModuleProxy(filepath.Join(t.TempDir(), "proxy"), src, standInVersion, time.Unix(1767225600, 0))
	require.NoError(t, err)
	modCache := t.TempDir()
	out := map[Platform]string{}
	for _, p := range platforms {
		bin := filepath.Join(dir, p.OS+"-"+p.Arch, "aibom-controller")
		require.NoError(t, compileModule(m, ".", p, modCache, bin))
		out[p] = bin
	}
	return out
}

// standInSource is a git checkout of the module example.com/standin, whose
// main.go has body after its imports.
func standInSource(t *testing.T, body string) string {
	t.Helper()
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/standin\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"fmt\"\n\n"+body+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "untracked.go"), []byte("package main\n\nfunc init() { panic(\"untracked\") }\n"), 0o644))
	for _, args := range [][]string{{"init", "-q"}, {"add", "go.mod", "main.go"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return src
}

func options(binaries map[Platform]string) ImageOptions {
	return ImageOptions{
		Version: "v9.9.9", Repository: "ghcr.io/aibom-dev/aibom-controller", Revision: "0123456789abcdef0123456789abcdef01234567",
		Created: time.Unix(1767225600, 0), Binaries: binaries, License: []byte("Apache License 2.0 (test)\n"),
	}
}

// TestImageIsReproducible: two builds from the same sources (binaries
// compiled twice, the index assembled and written twice) give the same
// digest and byte-identical layouts; another commit time gives another.
func TestImageIsReproducible(t *testing.T) {
	var digests []v1.Hash
	var layouts []string
	for range 2 {
		dir := t.TempDir()
		idx, err := BuildIndex(options(standIn(t, filepath.Join(dir, "image-binaries"))))
		require.NoError(t, err)
		d, err := idx.Digest()
		require.NoError(t, err)
		digests = append(digests, d)
		out := filepath.Join(dir, "image")
		require.NoError(t, WriteLayout(out, idx, "ghcr.io/aibom-dev/aibom-controller:v9.9.9"))
		layouts = append(layouts, out)
	}
	require.Equal(t, digests[0], digests[1])
	require.Equal(t, tree(t, layouts[0]), tree(t, layouts[1]), "the two layouts differ")

	o := options(standIn(t, t.TempDir()))
	o.Created = o.Created.Add(time.Second)
	idx, err := BuildIndex(o)
	require.NoError(t, err)
	other, err := idx.Digest()
	require.NoError(t, err)
	require.NotEqual(t, digests[0], other, "the digest must depend on the inputs")
}

// tree maps every file of a directory to its mode and contents, and
// checks that every file is 0644 and every directory 0755.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			require.Equal(t, os.ModeDir|0o755, info.Mode(), "%s", rel)
			return nil
		}
		require.Equal(t, os.FileMode(0o644), info.Mode(), "%s: every blob and file of the layout is 0644", rel)
		data, err := os.ReadFile(p)
		files[rel] = info.Mode().String() + " " + string(data)
		return err
	}))
	return files
}

// TestImageContents: what a security review looks for in the image.
func TestImageContents(t *testing.T) {
	binaries := standIn(t, t.TempDir())
	idx, err := BuildIndex(options(binaries))
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2)
	for i, m := range im.Manifests {
		p := platforms[i]
		require.Equal(t, &v1.Platform{OS: p.OS, Architecture: p.Arch}, m.Platform)
		img, err := idx.Image(m.Digest)
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		require.Equal(t, p.Arch, cf.Architecture)
		require.Equal(t, "65532:65532", cf.Config.User, "non-root")
		require.Equal(t, []string{"/aibom-controller"}, cf.Config.Entrypoint)
		require.Equal(t, "v9.9.9", cf.Config.Labels["org.opencontainers.image.version"], "the version label is VERSION")
		require.Equal(t, "Apache-2.0", cf.Config.Labels["org.opencontainers.image.licenses"])
		layers, err := img.Layers()
		require.NoError(t, err)
		require.Len(t, layers, 1, "an empty base: one layer, ours")

		entries := layerEntries(t, layers[0])
		require.Contains(t, string(entries["etc/passwd"].data), "nonroot:x:65532:65532:")
		require.EqualValues(t, 0o555, entries["aibom-controller"].header.Mode, "the binary is read-only and owned by root")
		require.Zero(t, entries["aibom-controller"].header.Uid)
		want, err := os.ReadFile(binaries[p])
		require.NoError(t, err)
		require.Equal(t, want, entries["aibom-controller"].data)
		home := entries["home/nonroot/"].header
		require.Equal(t, byte(tar.TypeDir), home.Typeflag)
		require.EqualValues(t, 0o700, home.Mode, "the home is private")
		require.Equal(t, []any{65532, 65532, "nonroot", "nonroot"}, []any{home.Uid, home.Gid, home.Uname, home.Gname}, "and the user's own")
		for _, e := range entries {
			require.Equal(t, time.Unix(1767225600, 0).UTC(), e.header.ModTime.UTC(), "%s: file times are the commit's", e.header.Name)
			if e.header.Name != "home/nonroot/" {
				require.Zero(t, e.header.Uid, "%s is root's", e.header.Name)
				require.Zero(t, e.header.Gid, "%s is root's", e.header.Name)
			}
		}
		roots := 0
		rest := entries["etc/ssl/certs/ca-certificates.crt"].data
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			_, err := x509.ParseCertificate(block.Bytes)
			require.NoError(t, err)
			roots++
		}
		require.Greater(t, roots, 100, "the Mozilla roots, for sinks over TLS")
	}
}

type entry struct {
	header *tar.Header
	data   []byte
}

func layerEntries(t *testing.T, l v1.Layer) map[string]entry {
	t.Helper()
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	out := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		var buf bytes.Buffer
		_, err = io.Copy(&buf, tr)
		require.NoError(t, err)
		out[h.Name] = entry{h, buf.Bytes()}
	}
}

// TestSBOMIsBoundToTheImage: the SBOM names the index digest as its
// subject, each platform image by digest, the binary in it and the Go
// toolchain, and is a valid CycloneDX 1.6 document.
func TestSBOMIsBoundToTheImage(t *testing.T) {
	dir := t.TempDir()
	idx, err := BuildIndex(options(standIn(t, filepath.Join(dir, "image-binaries"))))
	require.NoError(t, err)
	out := filepath.Join(dir, "image")
	require.NoError(t, WriteLayout(out, idx, "ghcr.io/aibom-dev/aibom-controller:v9.9.9"))
	bom, err := SBOM(out, filepath.Join(dir, "image-binaries"))
	require.NoError(t, err)
	data, err := encode(bom)
	require.NoError(t, err)
	require.NoError(t, document.ValidateSchema(data))

	digest, err := idx.Digest()
	require.NoError(t, err)
	require.Equal(t, digest.Hex, (*bom.Metadata.Component.Hashes)[0].Value)
	require.Contains(t, bom.Metadata.Component.PackageURL, "pkg:oci/aibom-controller@sha256%3A"+digest.Hex)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	for _, m := range im.Manifests {
		require.Contains(t, string(data), m.Digest.Hex)
	}
	require.Contains(t, string(data), "pkg:golang/stdlib@")

	// A binary other than the image's is refused.
	other := filepath.Join(dir, "image-binaries", "linux-arm64", "aibom-controller")
	require.NoError(t, os.WriteFile(other, []byte("not the binary"), 0o755))
	_, err = SBOM(out, filepath.Join(dir, "image-binaries"))
	require.Error(t, err)
}

// TestImageVersionIsVERSION: by default the image is stamped with, and
// labelled as, the repository's VERSION (the binaries and the chart use the
// same file: test/release TestOneVersion).
func TestImageVersionIsVERSION(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	require.NoError(t, err)
	got, err := readVERSION(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(want)), got)
}

// TestBuildInfoNamesTheVersion: a binary build compiles says the version
// in its build information (what "go version -m", trivy and syft read),
// with the h1: hash of the module zip it was built from; files git does
// not track are not in it; a second build at the same version after a
// change builds the change, not the cached module.
func TestBuildInfoNamesTheVersion(t *testing.T) {
	src := standInSource(t, `func main() { fmt.Println("one") }`)
	proxy := filepath.Join(t.TempDir(), "proxy")
	modCache := t.TempDir()
	native := Platform{"linux", "amd64"}
	build := func() (*buildinfo.BuildInfo, string) {
		m, err := writeModuleProxy(proxy, src, standInVersion, time.Unix(1767225600, 0))
		require.NoError(t, err)
		require.NoError(t, evictModule(modCache, m.Path))
		bin := filepath.Join(t.TempDir(), "bin")
		require.NoError(t, compileModule(m, ".", native, modCache, bin))
		info, err := buildinfo.ReadFile(bin)
		require.NoError(t, err)
		return info, bin
	}
	info, bin := build()
	require.Equal(t, "example.com/standin", info.Main.Path)
	require.Equal(t, standInVersion, info.Main.Version)
	zipHash, err := dirhash.HashZip(filepath.Join(proxy, "example.com", "standin", "@v", standInVersion+".zip"), dirhash.Hash1)
	require.NoError(t, err)
	require.Equal(t, zipHash, info.Main.Sum)
	out, err := exec.Command("go", "version", "-m", bin).Output()
	require.NoError(t, err)
	require.Regexp(t, `(?m)^\tmod\texample.com/standin\tv0.9.9\th1:`, string(out))
	if runtime.GOOS == native.OS && runtime.GOARCH == native.Arch {
		got, err := exec.Command(bin).CombinedOutput()
		require.NoError(t, err, "the untracked file is not built: %s", got)
		require.Equal(t, "one\n", string(got))
	}

	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"two\") }\n"), 0o644))
	again, _ := build()
	require.Equal(t, standInVersion, again.Main.Version)
	require.NotEqual(t, info.Main.Sum, again.Main.Sum, "the changed checkout is built, not the cached module")
}

// TestProvenance: the statement make image writes is an in-toto v1
// Statement whose predicate has the SLSA v1 provenance fields
// (testdata/slsa-provenance-v1.schema.json), about the index digest, from
// the commit and the module zip the binaries were compiled from, with the
// files next to the binary and the SBOM as a byproduct; the same inputs
// give the same bytes.
func TestProvenance(t *testing.T) {
	dir := t.TempDir()
	bins := filepath.Join(dir, "image-binaries")
	idx, err := BuildIndex(options(standIn(t, bins)))
	require.NoError(t, err)
	out := filepath.Join(dir, "image")
	require.NoError(t, WriteLayout(out, idx, "ghcr.io/aibom-dev/aibom-controller:v9.9.9"))
	bom, err := SBOM(out, bins)
	require.NoError(t, err)
	sbom, err := encode(bom)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "sbom.cdx.json"), sbom, 0o644))
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.sum"), nil, 0o644)) // the stand-in has no dependencies

	st, err := BuildProvenance(out, bins, root, "https://ci.example/builder@v1")
	require.NoError(t, err)
	data, err := json.MarshalIndent(st, "", "  ")
	require.NoError(t, err)

	schema, err := os.Open(filepath.Join("testdata", "slsa-provenance-v1.schema.json"))
	require.NoError(t, err)
	defer schema.Close()
	doc, err := jsonschema.UnmarshalJSON(schema)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("slsa-provenance-v1.schema.json", doc))
	sch, err := c.Compile("slsa-provenance-v1.schema.json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst))

	digest, err := idx.Digest()
	require.NoError(t, err)
	require.Equal(t, []ResourceDescriptor{{Name: "ghcr.io/aibom-dev/aibom-controller", Digest: map[string]string{"sha256": digest.Hex}}}, st.Subject)
	require.Equal(t, "https://ci.example/builder@v1", st.Predicate.RunDetails.Builder.ID)
	ext := st.Predicate.BuildDefinition.ExternalParameters
	require.Equal(t, "v9.9.9", ext["version"])
	require.Equal(t, []string{"linux/amd64", "linux/arm64"}, ext["platforms"])
	deps := st.Predicate.BuildDefinition.ResolvedDependencies
	require.Equal(t, ResourceDescriptor{URI: "git+https://github.com/aibom-dev/aibom@0123456789abcdef0123456789abcdef01234567", Digest: map[string]string{"gitCommit": "0123456789abcdef0123456789abcdef01234567"}}, deps[0], "the commit first")
	byURI := map[string]ResourceDescriptor{}
	byName := map[string]ResourceDescriptor{}
	for _, d := range deps {
		byURI[d.URI], byName[d.Name] = d, d
	}
	info, err := buildinfo.ReadFile(filepath.Join(bins, "linux-amd64", "aibom-controller"))
	require.NoError(t, err)
	zipHash, err := h1Hex(info.Main.Sum)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"dirHash": zipHash}, byURI["pkg:golang/example.com/standin@"+standInVersion].Digest, "the module zip compiled")
	for _, name := range []string{caPath, licensePath, "/etc/passwd", "/etc/group"} {
		require.Len(t, byName[name].Digest["sha256"], 64, name)
	}
	require.True(t, strings.HasPrefix(byName[caPath].URI, "pkg:golang/golang.org/x/crypto/x509roots/fallback"))
	sum := sha256.Sum256(sbom)
	require.Equal(t, hex.EncodeToString(sum[:]), st.Predicate.RunDetails.Byproducts[0].Digest["sha256"])

	again, err := BuildProvenance(out, bins, root, "https://ci.example/builder@v1")
	require.NoError(t, err)
	require.Equal(t, st, again, "a function of the inputs")

	// A go.sum that disagrees with what was compiled in is refused, and a
	// binary other than the image's too.
	_, err = BuildProvenance(out, bins, t.TempDir(), localBuilder)
	require.Error(t, err, "no go.sum")
	require.NoError(t, os.WriteFile(filepath.Join(bins, "linux-arm64", "aibom-controller"), []byte("not the binary"), 0o755))
	_, err = BuildProvenance(out, bins, root, localBuilder)
	require.Error(t, err)
}

func TestGoSumAndH1(t *testing.T) {
	p := filepath.Join(t.TempDir(), "go.sum")
	require.NoError(t, os.WriteFile(p, []byte("example.com/a v1.0.0 h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\nexample.com/a v1.0.0/go.mod h1:AAAA\n"), 0o644))
	sums, err := readGoSum(p)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"example.com/a v1.0.0": "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}, sums)
	// in-toto's example: the empty dirhash.
	h, err := h1Hex("h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
	require.NoError(t, err)
	require.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", h)
	_, err = h1Hex("h2:xyz")
	require.Error(t, err)
}

// tagOf: only a clean checkout sitting on the version's tag is the
// release's.
func TestTagOf(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644))
	git("add", "f")
	git("commit", "-q", "-m", "one")
	tagged, _ := tagOf(dir, "v0.1.0")
	require.False(t, tagged, "no tag")
	git("tag", "v0.1.0")
	tagged, err := tagOf(dir, "v0.1.0")
	require.NoError(t, err)
	require.True(t, tagged)
	tagged, _ = tagOf(dir, "v0.2.0")
	require.False(t, tagged, "another version's tag")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644))
	tagged, _ = tagOf(dir, "v0.1.0")
	require.False(t, tagged, "a dirty tree")
}
