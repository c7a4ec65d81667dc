package harness

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

// RunPods does what a kubelet would for the pods of a namespace that have
// no container status yet (there is no kubelet in the test control plane):
// each becomes Running, its containers running with the image ID
// "<repository>@sha256:<digest(pod, container)>" as a container runtime
// reports it. It returns how many pods it started.
func (e *Env) RunPods(ctx context.Context, namespace string, digest func(pod, container string) string) (int, error) {
	var pods corev1.PodList
	if err := e.Client.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if len(p.Status.ContainerStatuses) > 0 || p.DeletionTimestamp != nil {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		now := metav1.Now()
		for _, c := range p.Spec.Containers {
			repo, _, _ := document.ParseImage(c.Image)
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: repo + "@sha256:" + digest(p.Name, c.Name), Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		if err := e.Client.Status().Update(ctx, p); err != nil {
			return n, fmt.Errorf("run pod %s/%s: %w", namespace, p.Name, err)
		}
		n++
	}
	return n, nil
}
