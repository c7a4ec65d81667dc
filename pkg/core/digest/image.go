package digest

import (
	"cmp"
	"slices"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// ResolveImages reads, for each container that leaves its image to the
// pods (adapter.Container.ImageFromPods, with no Image), the image the
// attributed pods report for it, aligned by index with containers; the
// entries of other containers are zero. It returns nil when no container
// leaves its image to the pods, so that such workloads' inputs are what
// they were before images were read from pods.
//
// A pod's container status counts when its name is the container's Name or
// one of its PodNames, it is of the same kind (container or init
// container), and its status.image is a valid image reference that is not
// a bare digest. The image most pods run wins, ties broken by the lexically
// smallest reference; it is declared when every pod agrees and inferred
// otherwise (a rollout). The evidence cites the first pod, by name, running
// it: source pod_status, locator
// "pods/<pod>.status.containerStatuses[name=<name>].image". No such status:
// a zero entry, the image unresolved. The result does not depend on the
// order of pods or of their statuses.
func ResolveImages(containers []adapter.Container, pods []Pod) []document.ContainerImage {
	var out []document.ContainerImage
	for i, c := range containers {
		if !c.ImageFromPods || c.Image != "" {
			continue
		}
		if out == nil {
			out = make([]document.ContainerImage, len(containers))
		}
		out[i] = imageFromPods(c, pods)
	}
	return out
}

func imageFromPods(c adapter.Container, pods []Pod) document.ContainerImage {
	names := map[string]bool{c.Name: true}
	for _, n := range c.PodNames {
		names[n] = true
	}
	type seen struct{ pod, name string }
	byImage := map[string][]seen{}
	for _, p := range pods {
		for _, s := range p.Statuses {
			image := strings.TrimSpace(s.Image)
			if !names[s.Name] || s.Init != c.Init || image == "" || document.IsDigest(image) || !document.ValidReference(image) {
				continue
			}
			byImage[image] = append(byImage[image], seen{p.Name, s.Name})
		}
	}
	if len(byImage) == 0 {
		return document.ContainerImage{}
	}
	podCount := func(ss []seen) int {
		distinct := map[string]bool{}
		for _, x := range ss {
			distinct[x.pod] = true
		}
		return len(distinct)
	}
	images := make([]string, 0, len(byImage))
	for img := range byImage {
		images = append(images, img)
	}
	slices.SortFunc(images, func(a, b string) int {
		return cmp.Or(-cmp.Compare(podCount(byImage[a]), podCount(byImage[b])), strings.Compare(a, b))
	})
	chosen := images[0]
	cite := slices.MinFunc(byImage[chosen], func(a, b seen) int {
		return cmp.Or(strings.Compare(a.pod, b.pod), strings.Compare(a.name, b.name))
	})
	conf := adapter.Declared
	if len(images) > 1 {
		conf = adapter.Inferred
	}
	field := "containerStatuses"
	if c.Init {
		field = "initContainerStatuses"
	}
	return document.ContainerImage{Image: chosen, Confidence: conf, Evidence: adapter.Evidence{
		Source:  adapter.SourcePodStatus,
		Locator: "pods/" + cite.pod + ".status." + field + "[name=" + cite.name + "].image",
	}}
}

// ResolveWithImages resolves the digests of containers some of which run
// an image read from pods (images, as ResolveImages returns it): such a
// container is resolved as if its spec named that image, and a digest the
// image pins is located in pod status. With images nil it is Resolve.
func ResolveWithImages(containers []adapter.Container, images []document.ContainerImage, pods []Pod) []document.ContainerDigest {
	if images == nil {
		return Resolve(containers, pods)
	}
	filled := slices.Clone(containers)
	for i := range filled {
		if i < len(images) && images[i].Image != "" {
			filled[i].Image = images[i].Image
			filled[i].Evidence = images[i].Evidence
		}
	}
	out := Resolve(filled, pods)
	for i := range out {
		if i < len(images) && images[i].Image != "" && out[i].Evidence.Source == adapter.SourceImageReference {
			out[i].Evidence.Source = adapter.SourcePodStatus
		}
	}
	return out
}
