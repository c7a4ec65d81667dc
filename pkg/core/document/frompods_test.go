package document

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// servedModel is a root whose operator chooses the image of its "server"
// container (adapter.Container.ImageFromPods).
func servedModel() Input {
	return Input{
		Subject: Subject{APIVersion: "kubeai.org/v1", Group: "kubeai.org", Kind: "Model", Namespace: "ml", Name: "qwen", UID: "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"},
		Tool:    tool,
		Findings: adapter.Findings{
			Scrapers:   []adapter.Scraper{{Name: "kubeai", Version: "v1", Method: "crd-spec"}},
			Containers: []adapter.Container{{Name: "server", ImageFromPods: true, Evidence: ev(adapter.SourceCRDField, "spec.engine")}},
			Runtimes:   []adapter.Runtime{{Name: "vllm", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.engine")}},
		},
	}
}

func containerOf(t *testing.T, d doc) component {
	t.Helper()
	for _, c := range d.Components {
		if c.Type == "container" {
			return c
		}
	}
	t.Fatal("no container component")
	return component{}
}

// Read from pod status, the image names the component, and the evidence
// says where it was read: a pod_status method (dynamic analysis) at the
// status field, next to the adapter's field that makes the container run.
func TestImageReadFromPodsIsLocatedInPodStatus(t *testing.T) {
	in := servedModel()
	const imageLoc = "pods/qwen-5d8f-x.status.containerStatuses[name=server].image"
	in.Images = []ContainerImage{{Image: "docker.io/vllm/vllm-openai:v0.8.5", Confidence: adapter.Declared, Evidence: ev(adapter.SourcePodStatus, imageLoc)}}
	in.Digests = []ContainerDigest{{Digest: digestA, Confidence: adapter.Declared, Running: []RunningDigest{{Digest: digestA, Pods: 1}},
		Evidence: ev(adapter.SourcePodStatus, "pods/qwen-5d8f-x.status.containerStatuses[name=server].imageID")}}
	_, d := build(t, in)
	c := containerOf(t, d)
	assert.Equal(t, "docker.io/vllm/vllm-openai", c.Name)
	assert.Equal(t, "v0.8.5", c.Version)
	assert.Equal(t, []hash{{"SHA-256", strings.TrimPrefix(digestA, "sha256:")}}, c.Hashes)
	for name, want := range map[string]string{
		"aibom.confidence":        "declared",
		"aibom.image.fromPods":    "true",
		"aibom.container.name":    "server",
		"aibom.digest.source":     "pod_status",
		"aibom.digest.confidence": "declared",
	} {
		v, ok := prop(c.Properties, name)
		assert.True(t, ok, name)
		assert.Equal(t, want, v, name)
	}
	ev := string(c.Evidence)
	assert.Contains(t, ev, `"location":"`+imageLoc+`","additionalContext":"pod_status"`)
	assert.Contains(t, ev, `"technique":"dynamic-analysis","confidence":1,"value":"`+imageLoc+`"`)
	assert.Contains(t, ev, `"location":"spec.engine","additionalContext":"crd_field"`)
}

// Until a pod reports it, the container is listed under its name, its image
// and digest unresolved: never guessed.
func TestImageFromPodsUnresolvedUntilAPodRuns(t *testing.T) {
	for name, images := range map[string][]ContainerImage{"no entry": nil, "zero entry": {{}}} {
		t.Run(name, func(t *testing.T) {
			in := servedModel()
			in.Images = images
			_, d := build(t, in)
			c := containerOf(t, d)
			assert.Equal(t, "server", c.Name)
			assert.Empty(t, c.Version)
			assert.Empty(t, c.Hashes)
			assert.Empty(t, c.PURL)
			for name, want := range map[string]string{"aibom.confidence": "unresolved", "aibom.image.fromPods": "true", "aibom.digest.confidence": "unresolved"} {
				v, _ := prop(c.Properties, name)
				assert.Equal(t, want, v, name)
			}
		})
	}
}

// An image read from pods for a container that writes its own, or one
// without a confidence, cannot be represented faithfully.
func TestImageFromPodsErrors(t *testing.T) {
	in := vllmDeployment()
	in.Images = []ContainerImage{{Image: "nginx:1.25", Confidence: adapter.Declared, Evidence: ev(adapter.SourcePodStatus, "pods/p.status.containerStatuses[name=vllm].image")}}
	_, err := Build(in)
	require.ErrorContains(t, err, "an image read from pods for a container whose image is written")

	in = servedModel()
	in.Images = []ContainerImage{{Image: "nginx:1.25", Evidence: ev(adapter.SourcePodStatus, "x")}}
	_, err = Build(in)
	require.ErrorContains(t, err, `with confidence ""`)

	in = servedModel()
	in.Images = make([]ContainerImage, 2)
	_, err = Build(in)
	require.ErrorContains(t, err, "2 images read from pods for 1 containers")
}

// A root without a container that leaves its image to the pods encodes and
// hashes as before: Images is omitted from the input's JSON.
func TestNoImagesFromPodsLeavesInputsAsBefore(t *testing.T) {
	in := vllmDeployment()
	a, err := Build(in)
	require.NoError(t, err)
	in.Images = nil
	b, err := Build(in)
	require.NoError(t, err)
	require.Equal(t, a.JSON, b.JSON)
	js, err := json.Marshal(in)
	require.NoError(t, err)
	require.NotContains(t, string(js), `"Images"`)
}
