package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// The provenance is an in-toto Statement (v1) whose predicate is SLSA
// Provenance v1: which image index it is about (by digest), what it was
// built from (the commit, the module zip the binaries were compiled from,
// every Go module compiled in with its go.sum hash, the files laid next to
// the binary) and by what (the builder). It is written unsigned; a release
// signs it (docs/release.md).
const (
	statementType = "https://in-toto.io/Statement/v1"
	slsaV1        = "https://slsa.dev/provenance/v1"
	// buildType says how to read externalParameters: this program's build
	// command, documented in docs/release.md ("Provenance").
	buildType = "https://github.com/aibom-dev/aibom/hack/image/build@v1"
	// localBuilder is the builder id of a build on a maintainer's or a
	// user's machine: no build platform vouches for it. A release CI passes
	// its own (-builder-id).
	localBuilder = "https://github.com/aibom-dev/aibom/hack/image/local"
	sourceRepo   = "https://github.com/aibom-dev/aibom"
)

// Statement is an in-toto v1 Statement.
type Statement struct {
	Type          string               `json:"_type"`
	Subject       []ResourceDescriptor `json:"subject"`
	PredicateType string               `json:"predicateType"`
	Predicate     Provenance           `json:"predicate"`
}

// ResourceDescriptor is an in-toto ResourceDescriptor: at least one of URI
// and Digest is set.
type ResourceDescriptor struct {
	Name        string            `json:"name,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Digest      map[string]string `json:"digest,omitempty"`
	MediaType   string            `json:"mediaType,omitempty"`
	Annotations map[string]any    `json:"annotations,omitempty"`
}

// Provenance is the SLSA v1 provenance predicate.
type Provenance struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition is what was built, from what.
type BuildDefinition struct {
	BuildType            string               `json:"buildType"`
	ExternalParameters   map[string]any       `json:"externalParameters"`
	InternalParameters   map[string]any       `json:"internalParameters,omitempty"`
	ResolvedDependencies []ResourceDescriptor `json:"resolvedDependencies,omitempty"`
}

// RunDetails is who built it. No metadata (invocation, times): the
// statement is a function of the inputs, the same for the same commit.
type RunDetails struct {
	Builder    Builder              `json:"builder"`
	Byproducts []ResourceDescriptor `json:"byproducts,omitempty"`
}

// Builder identifies the build platform.
type Builder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version,omitempty"`
}

func runProvenance(args []string) error {
	fs := flag.NewFlagSet("provenance", flag.ExitOnError)
	dir := fs.String("layout", "_out/image", "OCI image layout written by build")
	root := fs.String("root", ".", "repository root (its go.sum is checked against the binaries)")
	builderID := fs.String("builder-id", localBuilder, "the SLSA builder id: the build platform that vouches for this build")
	out := fs.String("out", "", "output file (default: LAYOUT/provenance.intoto.json)")
	_ = fs.Parse(args)
	if *out == "" {
		*out = filepath.Join(*dir, "provenance.intoto.json")
	}
	st, err := BuildProvenance(*dir, sibling(*dir, binDirName), *root, *builderID)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("provenance %s for %s@sha256:%s\n", *out, st.Subject[0].Name, st.Subject[0].Digest["sha256"])
	return nil
}

// BuildProvenance describes the image index of an OCI layout (its one
// entry, as build writes it) and the binaries build left in binDir, each
// checked to be its platform image's. The Go modules compiled in are
// taken from the binaries' build information and must carry the hashes
// root/go.sum holds for them.
func BuildProvenance(dir, binDir, root, builderID string) (*Statement, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(topManifest.Manifests) != 1 {
		return nil, fmt.Errorf("%s: want one image index in the layout, found %d entries", dir, len(topManifest.Manifests))
	}
	entry := topManifest.Manifests[0]
	idx, err := top.ImageIndex(entry.Digest)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	ann := im.Annotations
	version, revision := ann["org.opencontainers.image.version"], ann["org.opencontainers.image.revision"]
	ref := entry.Annotations["org.opencontainers.image.ref.name"]
	repository := strings.TrimSuffix(ref, ":"+version)
	if version == "" || revision == "" || repository == "" {
		return nil, fmt.Errorf("%s: the index carries no version, revision or ref name: not a layout of build", dir)
	}
	sums, err := readGoSum(filepath.Join(root, "go.sum"))
	if err != nil {
		return nil, err
	}

	var platforms []string
	var deps []ResourceDescriptor
	seen := map[string]bool{}
	add := func(d ResourceDescriptor) {
		key := d.URI + "\x00" + d.Name
		if !seen[key] {
			seen[key] = true
			deps = append(deps, d)
		}
	}
	// The commit (when the tree was clean: a dirty build is not the
	// commit's, and says so).
	src := ResourceDescriptor{URI: "git+" + sourceRepo + "@" + strings.TrimSuffix(revision, "-dirty")}
	if strings.HasSuffix(revision, "-dirty") {
		src.Annotations = map[string]any{"dirty": true}
	} else {
		src.Digest = map[string]string{"gitCommit": revision}
	}
	add(src)
	goVersions := map[string]bool{}
	var buildFlags []string
	var mainPath, mainVersion string
	for _, m := range im.Manifests {
		plat := m.Platform
		if plat == nil {
			return nil, fmt.Errorf("index entry %s has no platform", m.Digest)
		}
		platforms = append(platforms, plat.OS+"/"+plat.Architecture)
		bin := filepath.Join(binDir, plat.OS+"-"+plat.Architecture, "aibom-controller")
		if err := sameBinary(idx, m.Digest, bin); err != nil {
			return nil, err
		}
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("build information of %s: %w", bin, err)
		}
		goVersions[info.GoVersion] = true
		if buildFlags == nil {
			buildFlags, mainPath, mainVersion = settings(info), info.Main.Path, info.Main.Version
		}
		// The source the binary was compiled from: the module zip, by the
		// hash the checksum database holds for a published version.
		main, err := moduleDescriptor(info.Main)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", bin, err)
		}
		add(main)
		for _, d := range info.Deps {
			mod := d
			if d.Replace != nil {
				mod = d.Replace
			}
			if want := sums[mod.Path+" "+mod.Version]; want != mod.Sum {
				return nil, fmt.Errorf("%s: module %s@%s compiled in with hash %q, go.sum has %q", bin, mod.Path, mod.Version, mod.Sum, want)
			}
			md, err := moduleDescriptor(*mod)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", bin, err)
			}
			add(md)
		}
		// The files laid next to the binary, as they are in the image.
		img, err := idx.Image(m.Digest)
		if err != nil {
			return nil, err
		}
		for _, name := range []string{caPath, licensePath, "/etc/passwd", "/etc/group"} {
			data, err := fileInImage(img, name[1:])
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(data)
			d := ResourceDescriptor{Name: name, Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}}
			if name == caPath {
				d.URI = caModuleURI()
			}
			add(d)
		}
	}
	sort.SliceStable(deps[1:], func(i, j int) bool {
		a, b := deps[1+i], deps[1+j]
		if a.URI != b.URI {
			return a.URI < b.URI
		}
		return a.Name < b.Name
	})
	var toolchains []string
	for v := range goVersions {
		toolchains = append(toolchains, v)
	}
	sort.Strings(toolchains)

	st := &Statement{
		Type:          statementType,
		Subject:       []ResourceDescriptor{{Name: repository, Digest: map[string]string{"sha256": entry.Digest.Hex}}},
		PredicateType: slsaV1,
		Predicate: Provenance{
			BuildDefinition: BuildDefinition{
				BuildType: buildType,
				ExternalParameters: map[string]any{
					"source":     map[string]any{"uri": "git+" + sourceRepo, "revision": revision},
					"version":    version,
					"repository": repository,
					"platforms":  platforms,
				},
				InternalParameters: map[string]any{
					"goToolchain": strings.Join(toolchains, ","),
					"buildFlags":  append(buildFlags, "-ldflags="+linkFlags(mainPath, mainVersion)),
				},
				ResolvedDependencies: deps,
			},
			RunDetails: RunDetails{Builder: Builder{ID: builderID, Version: map[string]string{"hack/image": version}}},
		},
	}
	if sbom, err := os.ReadFile(filepath.Join(dir, "sbom.cdx.json")); err == nil {
		sum := sha256.Sum256(sbom)
		st.Predicate.RunDetails.Byproducts = []ResourceDescriptor{{Name: "sbom.cdx.json", MediaType: "application/vnd.cyclonedx+json", Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}}}
	}
	return st, nil
}

// moduleDescriptor is a Go module as a resolved dependency: its purl and
// its go.sum hash as an in-toto dirHash (the h1: hash in hex).
func moduleDescriptor(m debug.Module) (ResourceDescriptor, error) {
	d := ResourceDescriptor{URI: "pkg:golang/" + m.Path + "@" + m.Version}
	if m.Sum == "" {
		return d, fmt.Errorf("module %s@%s has no hash in the build information", m.Path, m.Version)
	}
	h, err := h1Hex(m.Sum)
	if err != nil {
		return d, fmt.Errorf("module %s@%s: %w", m.Path, m.Version, err)
	}
	d.Digest = map[string]string{"dirHash": h}
	return d, nil
}

// h1Hex turns a go.sum "h1:<base64>" hash into lower-case hex, as in-toto's
// dirHash digest.
func h1Hex(sum string) (string, error) {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return "", fmt.Errorf("hash %q is not h1:", sum)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != sha256.Size {
		return "", fmt.Errorf("hash %q is not a SHA-256 in base64", sum)
	}
	return hex.EncodeToString(raw), nil
}

// readGoSum reads the module hashes of a go.sum ("<path> <version>" ->
// "h1:..."), leaving out the go.mod-only lines.
func readGoSum(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || strings.HasSuffix(f[1], "/go.mod") {
			continue
		}
		out[f[0]+" "+f[1]] = f[2]
	}
	return out, sc.Err()
}

// settings lists the build settings the toolchain recorded (-trimpath,
// -ldflags, CGO_ENABLED ...), but those of one platform: GOOS, GOARCH and
// the architecture level (GOAMD64, GOARM64 ...), which externalParameters'
// platforms say.
func settings(info *buildinfo.BuildInfo) []string {
	out := []string{}
	for _, s := range info.Settings {
		if s.Key == "GOOS" || s.Key == "GOARCH" || strings.HasPrefix(s.Key, "GO") && strings.HasSuffix(s.Key, "64") {
			continue
		}
		out = append(out, s.Key+"="+s.Value)
	}
	return out
}

// caModuleURI is the module the CA bundle comes from, at the version this
// program was built with (hack/image/go.sum pins it).
func caModuleURI() string {
	const path = "golang.org/x/crypto/x509roots/fallback"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return "pkg:golang/" + path + "@" + d.Version
			}
		}
	}
	return "pkg:golang/" + path
}
