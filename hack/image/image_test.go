package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

var platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}}

// standIn compiles a small static program for every platform into dir
// (<os>-<arch>/aibom-controller, as build lays binaries out) with the same
// flags build uses for the controller: the controller itself takes minutes
// to cross-compile, the image assembly is what these tests are about.
func standIn(t *testing.T, dir string) map[Platform]string {
	t.Helper()
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/standin\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"stand-in\") }\n"), 0o644))
	out := map[Platform]string{}
	for _, p := range platforms {
		bin := filepath.Join(dir, p.OS+"-"+p.Arch, "aibom-controller")
		require.NoError(t, compile(src, ".", p, "v9.9.9", bin))
		out[p] = bin
	}
	return out
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

// tree maps every file of a directory to its contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(data)
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
		for _, e := range entries {
			require.Equal(t, time.Unix(1767225600, 0).UTC(), e.header.ModTime.UTC(), "%s: file times are the commit's", e.header.Name)
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
