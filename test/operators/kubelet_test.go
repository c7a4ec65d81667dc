//go:build qualify

package operators

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

// imageDigest is the digest the suite's kubelet reports for an image: one
// image, one digest, whichever pod runs it (as a registry would have it).
func imageDigest(image string) string {
	sum := sha256.Sum256([]byte(image))
	return hex.EncodeToString(sum[:])
}

// runPods does what a kubelet would for the pods of ns that have no
// container status yet: each is bound to a node, gets an IP, and its
// containers run with the image ID "<repository>@sha256:<imageDigest>"
// (Ready, as the operators wait for). A pod for which finish says true
// instead runs to completion (Succeeded, exit code 0), as an initializer
// Job's pod does. A terminating pod is deleted at once (its containers
// stop on SIGTERM), as a kubelet confirms it. It returns how many pods it started or finished.
func runPods(ctx context.Context, ns string, finish func(*corev1.Pod) bool) (int, error) {
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			// Terminating: the containers stop at once, and the kubelet
			// confirms the deletion.
			if err := env.Client.Delete(ctx, p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				return n, fmt.Errorf("finish deleting pod %s/%s: %w", ns, p.Name, err)
			}
			continue
		}
		done := finish != nil && finish(p)
		if len(p.Status.ContainerStatuses) > 0 && (!done || p.Status.Phase == corev1.PodSucceeded) {
			continue
		}
		if p.Spec.NodeName == "" {
			// Pods are bound through the binding subresource, as the
			// scheduler does; nodeName cannot be updated otherwise.
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns}, Target: corev1.ObjectReference{Kind: "Node", Name: "qualify-node"}}
			if err := env.Client.SubResource("binding").Create(ctx, p.DeepCopy(), b); err != nil {
				return n, fmt.Errorf("bind pod %s/%s: %w", ns, p.Name, err)
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return n, err
			}
		}

		now := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.HostIP = fmt.Sprintf("10.0.%d.%d", (i/250)%250, i%250+1), "10.255.0.1"
		p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
		p.Status.StartTime = &now
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			repo, _, _ := document.ParseImage(c.Image)
			st := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: repo + "@sha256:" + imageDigest(c.Image),
				Ready: !done, Started: ptr.To(!done),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
			if done {
				st.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}}
			}
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, st)
		}
		ready := corev1.ConditionTrue
		if done {
			p.Status.Phase = corev1.PodSucceeded
			ready = corev1.ConditionFalse
		}
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
		}
		if err := env.Client.Status().Update(ctx, p); err != nil {
			return n, fmt.Errorf("run pod %s/%s: %w", ns, p.Name, err)
		}
		n++
	}
	return n, nil
}
