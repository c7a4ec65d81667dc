package release

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/aibom-dev/aibom/internal/manifest"
)

// readVersion is the repository's VERSION.
func readVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(repoPath("VERSION"))
	require.NoError(t, err)
	v := strings.TrimSpace(string(data))
	require.Regexp(t, `^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`, v, "VERSION is a semantic version with a leading v")
	return v
}

// TestOneVersion: VERSION is what the binaries report, what a document names
// as its tool version, the chart's appVersion (and, without the "v", its
// version), and the image tag config/default deploys.
func TestOneVersion(t *testing.T) {
	version := readVersion(t)

	ch, err := loader.Load(chartDir)
	require.NoError(t, err)
	require.Equal(t, version, ch.Metadata.AppVersion, "charts/aibom/Chart.yaml appVersion")
	require.Equal(t, strings.TrimPrefix(version, "v"), ch.Metadata.Version, "charts/aibom/Chart.yaml version")

	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), repoPath("config", "default"))
	require.NoError(t, err)
	out, err := resMap.AsYaml()
	require.NoError(t, err)
	objs, err := manifest.Decode("config/default", out)
	require.NoError(t, err)
	var images []string
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			d := into[struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Image string `json:"image"`
							} `json:"containers"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			}](t, o)
			for _, c := range d.Spec.Template.Spec.Containers {
				images = append(images, c.Image)
			}
		}
	}
	require.Equal(t, []string{"ghcr.io/aibom-dev/aibom-controller:" + version}, images, "config/default's image")

	bin := binaries(t)
	got, err := exec.Command(filepath.Join(bin, "aibom-controller"), "--version").Output()
	require.NoError(t, err)
	require.Equal(t, "aibom-controller "+version+"\n", string(got))
	got, err = exec.Command(filepath.Join(bin, "aibom"), "version").Output()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(got), "aibom "+version+" "), "aibom version: %s", got)

	doc, err := exec.Command(filepath.Join(bin, "aibom"), "scan", "-f", repoPath("examples", "10-vllm-deployment.yaml"), "-o", "cyclonedx-json").Output()
	require.NoError(t, err)
	require.Equal(t, version, toolVersion(t, doc), "a document's tool version")
}

// toolVersion is the version of the aibom-controller tool component of a
// CycloneDX document.
func toolVersion(t *testing.T, doc []byte) string {
	t.Helper()
	var bom struct {
		Metadata struct {
			Tools struct {
				Components []struct{ Name, Version string } `json:"components"`
			} `json:"tools"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(doc, &bom))
	for _, c := range bom.Metadata.Tools.Components {
		if c.Name == "aibom-controller" {
			return c.Version
		}
	}
	t.Fatalf("no aibom-controller tool component in %s", doc)
	return ""
}
