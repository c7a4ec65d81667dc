// Package digest resolves the image digest each container of a workload
// actually runs, from the spec and from the status of the workload's pods.
//
// A digest is never guessed. It is either pinned in the spec's image reference
// or read from a pod's container status for the same repository; otherwise it
// stays unresolved.
package digest

import (
	"cmp"
	"slices"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/imageref"
)

// PodContainerStatus is the part of a pod's container status (or init
// container status) that digest resolution reads.
type PodContainerStatus struct {
	// Name is the container's name in the pod.
	Name string
	// Image is status.image, the image the runtime reports it runs.
	Image string
	// ImageID is status.imageID, e.g. "docker.io/library/nginx@sha256:…";
	// empty while the image is being pulled.
	ImageID string
	// Init is true for an entry of status.initContainerStatuses.
	Init bool
}

// Pod is a pod attributed to the workload, reduced to its name and container
// statuses. The core converts real pods into this.
type Pod struct {
	// Name is the pod's name.
	Name string
	// Statuses lists the pod's container and init container statuses.
	Statuses []PodContainerStatus
}

// ParseImage splits an image reference into its normalised repository
// ("nginx" and "index.docker.io/library/nginx" both give
// "docker.io/library/nginx"), its tag and its pinned sha256 digest: the
// project's one parser, imageref.Parse, as the document uses it to name
// container components.
func ParseImage(ref string) (repository, tag, digest string) {
	return document.ParseImage(ref)
}

// ParseImageID reads a container status imageID (imageref.ParseImageID):
// "repo@sha256:<hex>", "docker-pullable://repo@sha256:<hex>", a bare
// "sha256:<hex>" and "docker://sha256:<hex>". The repository is normalised
// like ParseImage's, and is "" for the bare forms, which do not name one. ok
// is false when imageID carries no well-formed sha256 digest.
func ParseImageID(imageID string) (repository, digest string, ok bool) {
	return imageref.ParseImageID(imageID)
}

// observation is one pod container status that may carry c's digest.
type observation struct {
	pod, name string
	init      bool
	digest    string
}

// Resolve returns the digest of each container, aligned by index with
// containers; a container whose digest is not known gets a ContainerDigest
// with no Digest and confidence adapter.Unresolved. The result does not
// depend on the order of pods or of their statuses.
//
// For each container, in order of precedence:
//
//  1. A digest pinned in the spec's image ("…@sha256:<64 hex>") wins:
//     confidence declared, source image_reference, the container's image
//     locator.
//  2. Otherwise the digest is read from the pods' container statuses for the
//     same repository (after normalisation: "nginx" is
//     "docker.io/library/nginx", but "nvcr.io/nvidia/x" is not
//     "docker.io/nvidia/x"). Statuses whose name is the container's name or
//     one of its PodNames are preferred. Without such a status, a status of
//     any name is used only when all of them agree on exactly one digest. A
//     bare imageID ("sha256:…", "docker://sha256:…") names no repository; it
//     is used only for a status of a matching name whose image names the same
//     repository. The source is pod_status, the locator
//     "pods/<pod>.status.containerStatuses[name=<name>].imageID"
//     (initContainerStatuses for init containers).
//  3. Otherwise the digest is unresolved.
//
// A running digest read from pod status is an observed fact, not a guess, so
// it gets confidence declared, like a pinned one. During a rollout pods of
// the same container may disagree: Resolve then picks the digest run by the
// most pods (ties broken by the lexically smallest digest) and, because that
// choice is a heuristic, gives it confidence inferred. Either way Running
// lists every digest the pods run with the number of pods running it, most
// pods first: a rollout shows the old and the new image side by side.
//
// Resolve trusts the pods it is given: which pods belong to the workload is
// decided before (the core attributes a pod only through the ownership path
// its adapter declares), so that pods forged onto a workload never vote.
func Resolve(containers []adapter.Container, pods []Pod) []document.ContainerDigest {
	out := make([]document.ContainerDigest, len(containers))
	for i, c := range containers {
		out[i] = resolveOne(c, pods)
	}
	return out
}

func resolveOne(c adapter.Container, pods []Pod) document.ContainerDigest {
	unresolved := document.ContainerDigest{Confidence: adapter.Unresolved}
	repo, tag, pinned := ParseImage(c.Image)
	if pinned != "" {
		return document.ContainerDigest{
			Digest:     pinned,
			Confidence: adapter.Declared,
			Evidence:   adapter.Evidence{Source: adapter.SourceImageReference, Locator: c.Evidence.Locator},
		}
	}
	if repo == "" {
		return unresolved
	}

	names := map[string]bool{c.Name: true}
	for _, n := range c.PodNames {
		names[n] = true
	}
	var byName, byRepo []observation
	for _, p := range pods {
		for _, s := range p.Statuses {
			idRepo, d, ok := ParseImageID(s.ImageID)
			if !ok {
				continue
			}
			// A status that names another tag of the repository runs another
			// image: components of one root often share a container name
			// ("main") and a repository, but not their tags.
			if _, statusTag, _ := ParseImage(s.Image); tag != "" && statusTag != "" && statusTag != tag {
				continue
			}
			nameMatch := names[s.Name]
			if idRepo == "" {
				// A bare digest: trust it only for this very container
				// running the same repository.
				if statusRepo, _, _ := ParseImage(s.Image); !nameMatch || statusRepo != repo {
					continue
				}
			} else if idRepo != repo {
				continue
			}
			o := observation{pod: p.Name, name: s.Name, init: s.Init, digest: d}
			if nameMatch {
				byName = append(byName, o)
			} else {
				byRepo = append(byRepo, o)
			}
		}
	}

	obs := byName
	if len(obs) == 0 {
		obs = byRepo
		if len(distinctDigests(obs)) != 1 {
			return unresolved
		}
	}
	if len(obs) == 0 {
		return unresolved
	}

	// Count the pods running each digest.
	podsByDigest := map[string]map[string]bool{}
	for _, o := range obs {
		if podsByDigest[o.digest] == nil {
			podsByDigest[o.digest] = map[string]bool{}
		}
		podsByDigest[o.digest][o.pod] = true
	}
	digests := distinctDigests(obs)
	running := make([]document.RunningDigest, 0, len(digests))
	for _, d := range digests {
		running = append(running, document.RunningDigest{Digest: d, Pods: len(podsByDigest[d])})
	}
	// Most pods first, then by digest: the first is the one chosen.
	slices.SortStableFunc(running, func(a, b document.RunningDigest) int { return -cmp.Compare(a.Pods, b.Pods) })
	chosen := running[0].Digest
	conf := adapter.Declared
	if len(digests) > 1 {
		conf = adapter.Inferred
	}

	// Cite the first status, in a fixed order, that runs the chosen digest.
	var cite *observation
	for i := range obs {
		o := &obs[i]
		if o.digest != chosen {
			continue
		}
		if cite == nil || cmp.Or(
			strings.Compare(o.pod, cite.pod),
			strings.Compare(o.name, cite.name),
			boolCompare(o.init, cite.init),
		) < 0 {
			cite = o
		}
	}
	field := "containerStatuses"
	if cite.init {
		field = "initContainerStatuses"
	}
	return document.ContainerDigest{
		Digest:     chosen,
		Running:    running,
		Confidence: conf,
		Evidence: adapter.Evidence{
			Source:  adapter.SourcePodStatus,
			Locator: "pods/" + cite.pod + ".status." + field + "[name=" + cite.name + "].imageID",
		},
	}
}

// distinctDigests returns the distinct digests of obs, sorted.
func distinctDigests(obs []observation) []string {
	var ds []string
	for _, o := range obs {
		ds = append(ds, o.digest)
	}
	slices.Sort(ds)
	return slices.Compact(ds)
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}
