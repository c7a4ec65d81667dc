package digest

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// engine is a container whose operator chooses the image (KubeAI's engine).
var engine = adapter.Container{Name: "server", ImageFromPods: true, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.engine"}}

func podRunning(pod, name, image, imageID string) Pod {
	return Pod{Name: pod, Statuses: []PodContainerStatus{{Name: name, Image: image, ImageID: imageID}}}
}

func TestResolveImagesIsNilWithoutAContainerFromPods(t *testing.T) {
	spec := adapter.Container{Name: "vllm", Image: "vllm/vllm-openai:v0.6.3"}
	// A container that writes its image and sets the flag is read by its image.
	both := adapter.Container{Name: "x", Image: "nginx:1.25", ImageFromPods: true}
	pods := []Pod{podRunning("p", "vllm", "vllm/vllm-openai:v0.6.3", "docker.io/vllm/vllm-openai@"+dA)}
	require.Nil(t, ResolveImages([]adapter.Container{spec, both}, pods))
	require.Nil(t, ResolveImages(nil, pods))
}

func TestResolveImagesReadsTheImageThePodsReport(t *testing.T) {
	containers := []adapter.Container{{Name: "sidecar", Image: "busybox:1.36"}, engine}
	pods := []Pod{
		podRunning("m-1", "server", "docker.io/vllm/vllm-openai:v0.8.5", "docker.io/vllm/vllm-openai@"+dA),
		podRunning("m-0", "server", "docker.io/vllm/vllm-openai:v0.8.5", "docker.io/vllm/vllm-openai@"+dA),
	}
	images := ResolveImages(containers, pods)
	require.Equal(t, []document.ContainerImage{{}, {
		Image: "docker.io/vllm/vllm-openai:v0.8.5", Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourcePodStatus, Locator: "pods/m-0.status.containerStatuses[name=server].image"},
	}}, images)

	digests := ResolveWithImages(containers, images, pods)
	require.Equal(t, adapter.Unresolved, digests[0].Confidence, "busybox runs on no pod")
	require.Equal(t, dA, digests[1].Digest)
	require.Equal(t, adapter.Declared, digests[1].Confidence)
	require.Equal(t, adapter.Evidence{Source: adapter.SourcePodStatus, Locator: "pods/m-0.status.containerStatuses[name=server].imageID"}, digests[1].Evidence)
	require.Equal(t, []document.RunningDigest{{Digest: dA, Pods: 2}}, digests[1].Running)
}

// During a rollout the pods disagree: the image most pods run is chosen,
// inferred; the running digests are those of that image's pods.
func TestResolveImagesDuringARollout(t *testing.T) {
	pods := []Pod{
		podRunning("m-a", "server", "ollama/ollama:0.5.7", "docker.io/ollama/ollama@"+dB),
		podRunning("m-b", "server", "ollama/ollama:0.6.0", "docker.io/ollama/ollama@"+dC),
		podRunning("m-c", "server", "ollama/ollama:0.6.0", "docker.io/ollama/ollama@"+dC),
	}
	images := ResolveImages([]adapter.Container{engine}, pods)
	require.Equal(t, "ollama/ollama:0.6.0", images[0].Image)
	require.Equal(t, adapter.Inferred, images[0].Confidence)
	require.Equal(t, "pods/m-b.status.containerStatuses[name=server].image", images[0].Evidence.Locator)
	d := ResolveWithImages([]adapter.Container{engine}, images, pods)[0]
	require.Equal(t, dC, d.Digest)
	require.Equal(t, []document.RunningDigest{{Digest: dC, Pods: 2}}, d.Running, "the other tag runs another image")

	// The order of pods never shows.
	for i := 0; i < 20; i++ {
		shuffled := append([]Pod(nil), pods...)
		rand.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		require.Equal(t, images, ResolveImages([]adapter.Container{engine}, shuffled))
	}
}

// Until a pod reports the container, its image stays unresolved: another
// container's status, an init container's, a pod name the adapter did not
// list, an image that is no reference or a bare digest give nothing.
func TestResolveImagesNeverGuesses(t *testing.T) {
	for name, pods := range map[string][]Pod{
		"no pod":             nil,
		"another container":  {podRunning("p", "sidecar", "nginx:1.25", "docker.io/library/nginx@"+dA)},
		"an init container":  {{Name: "p", Statuses: []PodContainerStatus{{Name: "server", Image: "nginx:1.25", Init: true}}}},
		"no image yet":       {podRunning("p", "server", "", "")},
		"a bare digest":      {podRunning("p", "server", dA, dA)},
		"not a reference":    {podRunning("p", "server", "<none>", "")},
		"credentials in url": {podRunning("p", "server", "https://user:pass@registry/x", "")},
	} {
		t.Run(name, func(t *testing.T) {
			images := ResolveImages([]adapter.Container{engine}, pods)
			require.Equal(t, []document.ContainerImage{{}}, images)
			d := ResolveWithImages([]adapter.Container{engine}, images, pods)[0]
			require.Empty(t, d.Digest)
			require.Equal(t, adapter.Unresolved, d.Confidence)
		})
	}
	// A name the operator gives the running container counts.
	renamed := engine
	renamed.PodNames = []string{"server-ctr"}
	images := ResolveImages([]adapter.Container{renamed}, []Pod{podRunning("p", "server-ctr", "nginx:1.25", "docker.io/library/nginx@"+dA)})
	require.Equal(t, "pods/p.status.containerStatuses[name=server-ctr].image", images[0].Evidence.Locator)
}

// A status image pinned by digest gives that digest, located in pod status.
func TestResolveWithImagesPinnedInPodStatus(t *testing.T) {
	pods := []Pod{podRunning("p", "server", "nvcr.io/nim/meta/llama:1.0@"+dB, "")}
	images := ResolveImages([]adapter.Container{engine}, pods)
	d := ResolveWithImages([]adapter.Container{engine}, images, pods)[0]
	require.Equal(t, dB, d.Digest)
	require.Equal(t, adapter.Evidence{Source: adapter.SourcePodStatus, Locator: "pods/p.status.containerStatuses[name=server].image"}, d.Evidence)
}
