package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	ggcrtarball "github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Paths and identity inside the image.
const (
	binaryPath  = "/aibom-controller"
	caPath      = "/etc/ssl/certs/ca-certificates.crt"
	licensePath = "/usr/share/doc/aibom/LICENSE"
	// nonroot is distroless's "nonroot" user and group: the chart and
	// config/manager run the container as 65532:65532 too.
	nonroot = 65532
)

// Platform is an OS/architecture the image is built for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ImageOptions describe one image index build.
type ImageOptions struct {
	// Version is VERSION (the org.opencontainers.image.version label).
	Version string
	// Repository is where the image is meant to be pushed (source label and
	// the layout's ref name).
	Repository string
	// Revision is the git commit (org.opencontainers.image.revision).
	Revision string
	// Created is every timestamp of the image: file times, the config's
	// created, the created label. The commit's time, for reproducibility.
	Created time.Time
	// Binaries maps each platform to its static controller binary.
	Binaries map[Platform]string
	// License is the text shipped at /usr/share/doc/aibom/LICENSE.
	License []byte
}

// file is one regular file or directory of the image's single layer.
type file struct {
	name string
	mode int64
	data []byte // nil: a directory
	// owner is the file's user and group: root when 0, else nonroot.
	owner int
}

// BuildIndex builds the multi-platform OCI image index: per platform, one
// image on an empty base with one layer (the binary, /etc/passwd and
// /etc/group naming the nonroot user, a CA bundle, the license), running as
// 65532:65532. Every byte is a function of the options: no clock, no host
// user, no file order from the file system.
func BuildIndex(o ImageOptions) (v1.ImageIndex, error) {
	platforms := make([]Platform, 0, len(o.Binaries))
	for p := range o.Binaries {
		platforms = append(platforms, p)
	}
	sort.Slice(platforms, func(i, j int) bool { return platforms[i].String() < platforms[j].String() })

	ca, err := caBundle()
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       "aibom-controller",
		"org.opencontainers.image.description": "Keeps a CycloneDX AI Bill of Materials per AI workload in an AIBOM custom resource",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.source":      "https://github.com/aibom-dev/aibom",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		bin, err := os.ReadFile(o.Binaries[p])
		if err != nil {
			return nil, err
		}
		layer, err := tarLayer(o.Created, []file{
			{name: "etc/", mode: 0o755},
			{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
			{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
			{name: "etc/ssl/", mode: 0o755},
			{name: "etc/ssl/certs/", mode: 0o755},
			{name: caPath[1:], mode: 0o644, data: ca},
			{name: "home/", mode: 0o755},
			{name: "home/nonroot/", mode: 0o700, owner: nonroot}, // the user's own home
			{name: "tmp/", mode: 0o1777},
			{name: "usr/", mode: 0o755},
			{name: "usr/share/", mode: 0o755},
			{name: "usr/share/doc/", mode: 0o755},
			{name: "usr/share/doc/aibom/", mode: 0o755},
			{name: licensePath[1:], mode: 0o644, data: o.License},
			{name: binaryPath[1:], mode: 0o555, data: bin},
		})
		if err != nil {
			return nil, err
		}
		img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
		if err != nil {
			return nil, err
		}
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = p.OS, p.Arch
		cf.Created = v1.Time{Time: o.Created.UTC()}
		cf.Author = "aibom maintainers"
		cf.Config.User = fmt.Sprintf("%d:%d", nonroot, nonroot)
		cf.Config.Entrypoint = []string{binaryPath}
		cf.Config.WorkingDir = "/"
		cf.Config.Env = []string{"SSL_CERT_FILE=" + caPath}
		cf.Config.Labels = labels
		cf.History = []v1.History{{Created: cf.Created, CreatedBy: "hack/image: the static aibom-controller, CA bundle, nonroot user", Comment: "aibom " + o.Version}}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		img = mutate.Annotations(img, map[string]string{
			"org.opencontainers.image.version":  o.Version,
			"org.opencontainers.image.revision": o.Revision,
			"org.opencontainers.image.created":  labels["org.opencontainers.image.created"],
		}).(v1.Image)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}},
		})
	}
	return mutate.Annotations(idx, map[string]string{
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.revision": o.Revision,
		"org.opencontainers.image.source":   labels["org.opencontainers.image.source"],
		"org.opencontainers.image.created":  labels["org.opencontainers.image.created"],
	}).(v1.ImageIndex), nil
}

// tarLayer is a gzipped tar layer of files with fixed times and root
// ownership (the files are read-only to the nonroot user), but for those
// that the nonroot user owns (its home).
func tarLayer(mtime time.Time, files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: mtime.UTC(), Uid: 0, Gid: 0, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if f.owner == nonroot {
			h.Uid, h.Gid, h.Uname, h.Gname = nonroot, nonroot, "nonroot", "nonroot"
		}
		if f.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	tarball := buf.Bytes()
	// go-containerregistry gzips the tar itself (compress/gzip, no name or
	// time in the header): the same tar gives the same layer digest.
	return ggcrtarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarball)), nil
	}, ggcrtarball.WithCompressionLevel(gzip.BestCompression), ggcrtarball.WithMediaType(types.OCILayer))
}

// caBundle is the Mozilla root store as golang.org/x/crypto/x509roots
// packages it (pinned by go.sum), as PEM. Roots the store trusts only for
// certificates issued before a date are left out: a PEM bundle cannot say
// so, and trusting them fully would be wider than the store.
func caBundle() ([]byte, error) {
	var out bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		if err := pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, err
		}
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("empty CA bundle")
	}
	return out.Bytes(), nil
}

// WriteLayout writes the index as an OCI image layout in dir (replacing
// what was there), its one entry named ref. Every file is written 0644 and
// every directory 0755, whatever the umask and however go-containerregistry
// wrote it (layers through a temporary file, 0600; the index, 0755): a copy
// of the layout (crane push, a tarball) is the same everywhere.
func WriteLayout(dir string, idx v1.ImageIndex, ref string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(path, mode)
	})
}
