package main

import (
	"debug/buildinfo"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func runSBOM(args []string) error {
	fs := flag.NewFlagSet("sbom", flag.ExitOnError)
	dir := fs.String("layout", "_out/image", "OCI image layout written by build")
	out := fs.String("out", "", "output file (default: LAYOUT/sbom.cdx.json)")
	_ = fs.Parse(args)
	if *out == "" {
		*out = filepath.Join(*dir, "sbom.cdx.json")
	}
	bom, err := SBOM(*dir, filepath.Join(filepath.Dir(filepath.Clean(*dir)), filepath.Base(*dir)+"-"+binDirName))
	if err != nil {
		return err
	}
	data, err := encode(bom)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return err
	}
	fmt.Printf("sbom %s for %s\n", *out, bom.Metadata.Component.BOMRef)
	return nil
}

// encode writes the BOM as CycloneDX 1.6 JSON.
func encode(bom *cdx.BOM) ([]byte, error) {
	var buf strings.Builder
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		return nil, err
	}
	return []byte(buf.String()), nil
}

// SBOM describes the image index of an OCI layout (its one entry) and the
// controller binaries build left in binDir (<os>-<arch>/aibom-controller).
// Each binary is matched to its platform's image by digest, so the SBOM is
// bound to exactly the images it describes.
func SBOM(dir, binDir string) (*cdx.BOM, error) {
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
	ref := entry.Annotations["org.opencontainers.image.ref.name"]
	repository, version, _ := strings.Cut(ref, ":")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repository, version = ref[:i], ref[i+1:]
	}
	idx, err := top.ImageIndex(entry.Digest)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}

	indexRef := ociPURL(repository, entry.Digest, version, nil)
	bom := cdx.NewBOM()
	bom.SerialNumber = "" // a function of the inputs only
	bom.Metadata = &cdx.Metadata{
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication, Name: "aibom hack/image", Version: version}}},
		Component: &cdx.Component{
			BOMRef: indexRef, Type: cdx.ComponentTypeContainer, Name: repository, Version: entry.Digest.String(),
			PackageURL: indexRef,
			Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: entry.Digest.Hex}},
			Properties: &[]cdx.Property{{Name: "oci:tag", Value: version}, {Name: "oci:mediaType", Value: string(entry.MediaType)}},
		},
	}
	var components []cdx.Component
	var deps []cdx.Dependency
	seen := map[string]bool{}
	var platformRefs []string
	for _, m := range im.Manifests {
		plat := m.Platform
		if plat == nil {
			return nil, fmt.Errorf("index entry %s has no platform", m.Digest)
		}
		imgRef := ociPURL(repository, m.Digest, version, plat)
		platformRefs = append(platformRefs, imgRef)
		bin := filepath.Join(binDir, plat.OS+"-"+plat.Architecture, "aibom-controller")
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("build information of %s: %w", bin, err)
		}
		if err := sameBinary(idx, m.Digest, bin); err != nil {
			return nil, err
		}
		binRef := "binary:" + plat.OS + "/" + plat.Architecture + ":aibom-controller"
		components = append(components, cdx.Component{
			BOMRef: imgRef, Type: cdx.ComponentTypeContainer, Name: repository, Version: m.Digest.String(), PackageURL: imgRef,
			Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: m.Digest.Hex}},
			Properties: &[]cdx.Property{{Name: "oci:platform", Value: plat.OS + "/" + plat.Architecture}},
		}, cdx.Component{
			BOMRef: binRef, Type: cdx.ComponentTypeApplication, Name: "aibom-controller", Version: version,
			PackageURL: "pkg:golang/" + info.Main.Path + "@" + version + "?type=module",
			Properties: &[]cdx.Property{{Name: "path", Value: binaryPath}, {Name: "go:toolchain", Value: info.GoVersion}, {Name: "go:platform", Value: plat.OS + "/" + plat.Architecture}},
		})
		var binDeps []string
		stdlib := "pkg:golang/stdlib@" + strings.TrimPrefix(info.GoVersion, "go")
		binDeps = append(binDeps, stdlib)
		if !seen[stdlib] {
			seen[stdlib] = true
			components = append(components, cdx.Component{BOMRef: stdlib, Type: cdx.ComponentTypeLibrary, Name: "stdlib", Version: info.GoVersion, PackageURL: stdlib})
		}
		for _, d := range info.Deps {
			mod := d
			if d.Replace != nil {
				mod = d.Replace
			}
			purl := "pkg:golang/" + mod.Path + "@" + mod.Version + "?type=module"
			binDeps = append(binDeps, purl)
			if seen[purl] {
				continue
			}
			seen[purl] = true
			c := cdx.Component{BOMRef: purl, Type: cdx.ComponentTypeLibrary, Name: mod.Path, Version: mod.Version, PackageURL: purl}
			if mod.Sum != "" {
				c.Properties = &[]cdx.Property{{Name: "go:sum", Value: mod.Sum}}
			}
			components = append(components, c)
		}
		sort.Strings(binDeps)
		deps = append(deps, cdx.Dependency{Ref: imgRef, Dependencies: &[]string{binRef}}, cdx.Dependency{Ref: binRef, Dependencies: &binDeps})
	}
	deps = append([]cdx.Dependency{{Ref: indexRef, Dependencies: &platformRefs}}, deps...)
	bom.Components, bom.Dependencies = &components, &deps
	return bom, nil
}

// sameBinary checks that the binary is the one in the platform image's layer
// (by comparing sizes and bytes), so that the SBOM cannot describe a binary
// other than the one shipped.
func sameBinary(idx v1.ImageIndex, digest v1.Hash, bin string) error {
	img, err := idx.Image(digest)
	if err != nil {
		return err
	}
	want, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	got, err := fileInImage(img, binaryPath[1:])
	if err != nil {
		return err
	}
	if string(got) != string(want) {
		return fmt.Errorf("%s is not the binary of image %s: run build again", bin, digest)
	}
	return nil
}

// ociPURL is the package URL of an image by digest.
func ociPURL(repository string, digest v1.Hash, tag string, plat *v1.Platform) string {
	name := repository[strings.LastIndex(repository, "/")+1:]
	q := url.Values{}
	q.Set("repository_url", repository)
	if tag != "" {
		q.Set("tag", tag)
	}
	if plat != nil {
		q.Set("arch", plat.Architecture)
		q.Set("os", plat.OS)
	}
	// The purl spec percent-encodes the colon of the digest version.
	return "pkg:oci/" + name + "@" + strings.ReplaceAll(digest.String(), ":", "%3A") + "?" + q.Encode()
}
