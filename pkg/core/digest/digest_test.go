package digest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

var (
	hexA = strings.Repeat("a", 64)
	hexB = strings.Repeat("b", 64)
	hexC = strings.Repeat("c", 64)
	dA   = "sha256:" + hexA
	dB   = "sha256:" + hexB
	dC   = "sha256:" + hexC
)

func TestParseImage(t *testing.T) {
	for _, tc := range []struct {
		ref, repo, tag, digest string
	}{
		{"nginx", "docker.io/library/nginx", "", ""},
		{"nginx:1.25", "docker.io/library/nginx", "1.25", ""},
		{"docker.io/nginx:1.25", "docker.io/library/nginx", "1.25", ""},
		{"docker.io/library/nginx:1.25", "docker.io/library/nginx", "1.25", ""},
		{"index.docker.io/library/nginx", "docker.io/library/nginx", "", ""},
		{"index.docker.io/nginx", "docker.io/library/nginx", "", ""},
		{"Docker.IO/library/nginx", "docker.io/library/nginx", "", ""},
		{"registry-1.docker.io/library/nginx", "docker.io/library/nginx", "", ""},
		{"MyRegistry/app", "myregistry/app", "", ""},
		{"library/nginx", "docker.io/library/nginx", "", ""},
		{"nvidia/cuda:12.4.1-base", "docker.io/nvidia/cuda", "12.4.1-base", ""},
		{"nvcr.io/nvidia/cuda:12.4.1-base", "nvcr.io/nvidia/cuda", "12.4.1-base", ""},
		{"vllm/vllm-openai:v0.6.3", "docker.io/vllm/vllm-openai", "v0.6.3", ""},
		{"localhost/app", "localhost/app", "", ""},
		{"localhost:5000/app:dev", "localhost:5000/app", "dev", ""},
		{"registry.local:5000/team/app", "registry.local:5000/team/app", "", ""},
		{"ghcr.io/org/a/b/c:v1", "ghcr.io/org/a/b/c", "v1", ""},
		{"nginx@" + dA, "docker.io/library/nginx", "", dA},
		{"nginx:1.25@" + dA, "docker.io/library/nginx", "1.25", dA},
		{"nvcr.io/nim/meta/llama:1.0@" + dA, "nvcr.io/nim/meta/llama", "1.0", dA},
		{"localhost:5000/app@" + dA, "localhost:5000/app", "", dA},
		// Malformed digests are not digests.
		{"nginx@sha256:abc", "docker.io/library/nginx", "", ""},
		{"nginx@sha256:" + strings.ToUpper(hexA), "docker.io/library/nginx", "", ""},
		{"nginx@sha512:" + hexA + hexA, "docker.io/library/nginx", "", ""},
		{"  nginx:1.25  ", "docker.io/library/nginx", "1.25", ""},
		{"", "", "", ""},
		{"   ", "", "", ""},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			repo, tag, digest := ParseImage(tc.ref)
			assert.Equal(t, tc.repo, repo, "repository")
			assert.Equal(t, tc.tag, tag, "tag")
			assert.Equal(t, tc.digest, digest, "digest")
		})
	}
}

func TestParseImageID(t *testing.T) {
	for _, tc := range []struct {
		id, repo, digest string
		ok               bool
	}{
		{"docker.io/library/nginx@" + dA, "docker.io/library/nginx", dA, true},
		{"nginx@" + dA, "docker.io/library/nginx", dA, true},
		{"index.docker.io/library/nginx@" + dA, "docker.io/library/nginx", dA, true},
		{"docker-pullable://nginx@" + dA, "docker.io/library/nginx", dA, true},
		{"docker-pullable://nvcr.io/nvidia/x@" + dA, "nvcr.io/nvidia/x", dA, true},
		{"nvcr.io/nvidia/x:1.0@" + dA, "nvcr.io/nvidia/x", dA, true},
		{dA, "", dA, true},
		{"docker://" + dA, "", dA, true},
		{"", "", "", false},
		{"sha256:abc", "", "", false},
		{"nginx", "", "", false},
		{"nginx:1.25", "", "", false},
		{"nginx@sha256:abc", "", "", false},
		{"@" + dA, "", "", false},
		{"docker://nginx", "", "", false},
		{hexA, "", "", false},
	} {
		t.Run(tc.id, func(t *testing.T) {
			repo, digest, ok := ParseImageID(tc.id)
			assert.Equal(t, tc.ok, ok, "ok")
			assert.Equal(t, tc.repo, repo, "repository")
			assert.Equal(t, tc.digest, digest, "digest")
		})
	}
}

func container(name, image string) adapter.Container {
	return adapter.Container{Name: name, Image: image, Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: "spec.template.spec.containers[0].image"}}
}

func status(name, image, imageID string) PodContainerStatus {
	return PodContainerStatus{Name: name, Image: image, ImageID: imageID}
}

func pod(name string, statuses ...PodContainerStatus) Pod {
	return Pod{Name: name, Statuses: statuses}
}

// fromPod is a digest read from one pod's status for container, run by that
// pod alone.
func fromPod(d, podName, container string) document.ContainerDigest {
	return document.ContainerDigest{Digest: d, Confidence: adapter.Declared, Evidence: adapter.Evidence{
		Source:  adapter.SourcePodStatus,
		Locator: "pods/" + podName + ".status.containerStatuses[name=" + container + "].imageID",
	}, Running: []document.RunningDigest{{Digest: d, Pods: 1}}}
}

// running replaces the running digests of cd.
func running(cd document.ContainerDigest, rs ...document.RunningDigest) document.ContainerDigest {
	cd.Running = rs
	return cd
}

var unresolved = document.ContainerDigest{Confidence: adapter.Unresolved}

func TestResolve(t *testing.T) {
	initC := container("fetch", "busybox:1.36")
	initC.Init = true
	renamed := container("nim", "nvcr.io/nim/meta/llama:1.0")
	renamed.PodNames = []string{"nim-ctr", "nim-leader"}

	for _, tc := range []struct {
		name string
		c    adapter.Container
		pods []Pod
		want document.ContainerDigest
	}{
		// Rule 1: a digest pinned in the spec wins.
		{
			name: "pinned in spec",
			c:    container("main", "nginx@"+dA),
			want: document.ContainerDigest{Digest: dA, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: "spec.template.spec.containers[0].image"}},
		},
		{
			name: "pinned in spec beats pod status",
			c:    container("main", "nginx:1.25@"+dA),
			pods: []Pod{pod("p1", status("main", "nginx:1.25", "docker.io/library/nginx@"+dB))},
			want: document.ContainerDigest{Digest: dA, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: "spec.template.spec.containers[0].image"}},
		},
		{
			name: "malformed pin falls back to pod status",
			c:    container("main", "nginx@sha256:abc"),
			pods: []Pod{pod("p1", status("main", "nginx", "docker.io/library/nginx@"+dB))},
			want: fromPod(dB, "p1", "main"),
		},

		// Rule 2: the running digest of the same repository.
		{
			// Two Dynamo components both name their container "main" and
			// run one repository: a pod of the 0.4.1 component must not
			// lend its digest to the 0.3.2 component.
			name: "same name and repository, another tag",
			c:    container("main", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.3.2"),
			pods: []Pod{pod("worker", status("main", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1", "nvcr.io/nvidia/ai-dynamo/vllm-runtime@"+dA))},
			want: document.ContainerDigest{Confidence: adapter.Unresolved},
		},
		{
			name: "same name, repository and tag among pods of other tags",
			c:    container("main", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"),
			pods: []Pod{
				pod("frontend", status("main", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.3.2", "nvcr.io/nvidia/ai-dynamo/vllm-runtime@"+dB)),
				pod("worker", status("main", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1", "nvcr.io/nvidia/ai-dynamo/vllm-runtime@"+dA)),
			},
			want: fromPod(dA, "worker", "main"),
		},
		{
			name: "same name and repository",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("main", "docker.io/library/nginx:1.25", "docker.io/library/nginx@"+dA))},
			want: fromPod(dA, "p1", "main"),
		},
		{
			name: "nginx is docker.io/library/nginx is index.docker.io/library/nginx",
			c:    container("main", "index.docker.io/library/nginx:1.25"),
			pods: []Pod{pod("p1", status("main", "nginx:1.25", "nginx@"+dA))},
			want: fromPod(dA, "p1", "main"),
		},
		{
			name: "docker.io/library spelled out in the spec",
			c:    container("main", "docker.io/library/nginx"),
			pods: []Pod{pod("p1", status("main", "nginx", "docker-pullable://nginx@"+dA))},
			want: fromPod(dA, "p1", "main"),
		},
		{
			name: "init container",
			c:    initC,
			pods: []Pod{pod("p1",
				PodContainerStatus{Name: "fetch", Image: "busybox:1.36", ImageID: "docker.io/library/busybox@" + dA, Init: true},
				status("main", "nginx", "docker.io/library/nginx@"+dB),
			)},
			want: document.ContainerDigest{Digest: dA, Confidence: adapter.Declared, Evidence: adapter.Evidence{
				Source: adapter.SourcePodStatus, Locator: "pods/p1.status.initContainerStatuses[name=fetch].imageID",
			}, Running: []document.RunningDigest{{Digest: dA, Pods: 1}}},
		},
		{
			name: "renamed in the pod (PodNames)",
			c:    renamed,
			pods: []Pod{pod("p1", status("nim-ctr", "nvcr.io/nim/meta/llama:1.0", "nvcr.io/nim/meta/llama@"+dA))},
			want: fromPod(dA, "p1", "nim-ctr"),
		},
		{
			name: "same name, other repository: unresolved",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("main", "httpd:2.4", "docker.io/library/httpd@"+dA))},
			want: unresolved,
		},
		{
			name: "nvcr.io/nvidia/x is not docker.io/nvidia/x",
			c:    container("main", "nvcr.io/nvidia/x:1"),
			pods: []Pod{pod("p1", status("main", "nvidia/x:1", "docker.io/nvidia/x@"+dA))},
			want: unresolved,
		},
		{
			name: "docker.io/nvidia/x is not nvcr.io/nvidia/x",
			c:    container("main", "nvidia/x:1"),
			pods: []Pod{pod("p1", status("main", "nvcr.io/nvidia/x:1", "nvcr.io/nvidia/x@"+dA))},
			want: unresolved,
		},
		{
			name: "other name, same repository, one digest",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("web", "nginx:1.25", "nginx@"+dA)), pod("p2", status("web", "nginx:1.25", "nginx@"+dA))},
			want: running(fromPod(dA, "p1", "web"), document.RunningDigest{Digest: dA, Pods: 2}),
		},
		{
			name: "other name, same repository, two digests: unresolved",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("web", "nginx:1.25", "nginx@"+dA)), pod("p2", status("web", "nginx:1.25", "nginx@"+dB))},
			want: unresolved,
		},
		{
			name: "name match preferred over other names",
			c:    container("main", "nginx"),
			pods: []Pod{pod("p1",
				status("sidecar", "nginx", "nginx@"+dA),
				status("main", "nginx", "nginx@"+dB),
			)},
			want: fromPod(dB, "p1", "main"),
		},
		{
			name: "bare sha256 with same name and image repository",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("main", "docker.io/library/nginx:1.25", dA))},
			want: fromPod(dA, "p1", "main"),
		},
		{
			name: "docker://sha256 with same name and image repository",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("main", "nginx:1.25", "docker://"+dA))},
			want: fromPod(dA, "p1", "main"),
		},
		{
			name: "bare sha256 of another name: unresolved",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("web", "nginx:1.25", dA))},
			want: unresolved,
		},
		{
			name: "bare sha256 of another image repository: unresolved",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("main", "httpd:2.4", dA))},
			want: unresolved,
		},
		{
			name: "bare sha256 with an empty image: unresolved",
			c:    container("main", "nginx:1.25"),
			pods: []Pod{pod("p1", status("main", "", dA))},
			want: unresolved,
		},

		// Rollouts: pods disagree.
		{
			name: "rollout: most pods win",
			c:    container("main", "nginx"),
			pods: []Pod{
				pod("p1", status("main", "nginx", "nginx@"+dB)),
				pod("p2", status("main", "nginx", "nginx@"+dA)),
				pod("p3", status("main", "nginx", "nginx@"+dB)),
			},
			want: document.ContainerDigest{Digest: dB, Confidence: adapter.Inferred, Evidence: adapter.Evidence{
				Source: adapter.SourcePodStatus, Locator: "pods/p1.status.containerStatuses[name=main].imageID",
			}, Running: []document.RunningDigest{{Digest: dB, Pods: 2}, {Digest: dA, Pods: 1}}},
		},
		{
			name: "rollout: tie broken by the smaller digest",
			c:    container("main", "nginx"),
			pods: []Pod{
				pod("p1", status("main", "nginx", "nginx@"+dC)),
				pod("p2", status("main", "nginx", "nginx@"+dA)),
			},
			want: document.ContainerDigest{Digest: dA, Confidence: adapter.Inferred, Evidence: adapter.Evidence{
				Source: adapter.SourcePodStatus, Locator: "pods/p2.status.containerStatuses[name=main].imageID",
			}, Running: []document.RunningDigest{{Digest: dA, Pods: 1}, {Digest: dC, Pods: 1}}},
		},
		{
			name: "rollout to another repository: old pods ignored",
			c:    container("main", "nginx:1.27"),
			pods: []Pod{
				pod("old-1", status("main", "httpd", "httpd@"+dA)),
				pod("old-2", status("main", "httpd", "httpd@"+dA)),
				pod("new-1", status("main", "nginx:1.27", "nginx@"+dB)),
			},
			want: fromPod(dB, "new-1", "main"),
		},

		// Rule 3: nothing known.
		{name: "no pods", c: container("main", "nginx"), want: unresolved},
		{
			name: "image not pulled yet",
			c:    container("main", "nginx"),
			pods: []Pod{pod("p1", status("main", "nginx", ""))},
			want: unresolved,
		},
		{
			name: "malformed imageID",
			c:    container("main", "nginx"),
			pods: []Pod{pod("p1", status("main", "nginx", "nginx@sha256:abc"))},
			want: unresolved,
		},
		{
			name: "no image in spec",
			c:    container("main", ""),
			pods: []Pod{pod("p1", status("main", "nginx", dA))},
			want: unresolved,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve([]adapter.Container{tc.c}, tc.pods)
			require.Len(t, got, 1)
			assert.Equal(t, tc.want, got[0])

			// The same answer whatever the order of pods and statuses.
			rng := rand.New(rand.NewPCG(7, 11))
			for range 10 {
				pods := shuffled(rng, tc.pods)
				assert.Equal(t, tc.want, Resolve([]adapter.Container{tc.c}, pods)[0])
			}
		})
	}
}

func shuffled(rng *rand.Rand, pods []Pod) []Pod {
	out := slices.Clone(pods)
	for i := range out {
		out[i].Statuses = slices.Clone(out[i].Statuses)
		rng.Shuffle(len(out[i].Statuses), func(a, b int) {
			out[i].Statuses[a], out[i].Statuses[b] = out[i].Statuses[b], out[i].Statuses[a]
		})
	}
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

func TestResolveAligned(t *testing.T) {
	containers := []adapter.Container{
		container("main", "vllm/vllm-openai:v0.6.3"),
		container("sidecar", "envoyproxy/envoy:v1.31"),
		container("pinned", "nvcr.io/nvidia/x@"+dC),
	}
	pods := []Pod{
		pod("p1", status("main", "vllm/vllm-openai:v0.6.3", "docker.io/vllm/vllm-openai@"+dA)),
		pod("p2", status("main", "vllm/vllm-openai:v0.6.3", "docker.io/vllm/vllm-openai@"+dA)),
	}
	got := Resolve(containers, pods)
	require.Len(t, got, 3)
	assert.Equal(t, running(fromPod(dA, "p1", "main"), document.RunningDigest{Digest: dA, Pods: 2}), got[0])
	assert.Equal(t, unresolved, got[1])
	assert.Equal(t, dC, got[2].Digest)
	assert.Equal(t, adapter.SourceImageReference, got[2].Evidence.Source)

	assert.Empty(t, Resolve(nil, pods))
}

// TestResolveFeedsDocument checks that resolved digests build a valid
// document.
func TestResolveFeedsDocument(t *testing.T) {
	containers := []adapter.Container{container("main", "nginx:1.25"), container("other", "redis")}
	pods := []Pod{pod("p1", status("main", "nginx:1.25", "docker-pullable://nginx@"+dA))}
	res, err := document.Build(document.Input{
		Subject:  document.Subject{Kind: "Deployment", Group: "apps", APIVersion: "apps/v1", Namespace: "ns", Name: "web"},
		Findings: adapter.Findings{Containers: containers},
		Digests:  Resolve(containers, pods),
	})
	require.NoError(t, err)
	require.NoError(t, document.ValidateSchema(res.JSON))
	assert.Contains(t, string(res.JSON), `"purl":"pkg:oci/nginx@sha256%3A`+hexA+`?repository_url=docker.io%2Flibrary%2Fnginx&tag=1.25"`)
	assert.Equal(t, 2, res.Summary.Images)
}
