package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	corewatch "github.com/aibom-dev/aibom/pkg/core/watch"
)

// podSpec is a pod spec with a field of every shape a scrape reads:
// quantities, int-or-strings, probes, env from secrets, volumes.
func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "vllm", Image: "vllm/vllm-openai:v0.6.3",
			Args:  []string{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "2"},
			Env:   []corev1.EnvVar{{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hf"}, Key: "token"}}}, {Name: "RATIO", Value: "0.9"}},
			Ports: []corev1.ContainerPort{{ContainerPort: 8000, Name: "http"}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("64Gi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
			VolumeMounts:   []corev1.VolumeMount{{Name: "cache", MountPath: "/root/.cache"}},
		}},
		Volumes: []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("10Gi"))}}}},
	}
}

// lookup is a kind's entry in a registry of the apps and batch adapters.
func lookup(t *testing.T, gk schema.GroupKind) graph.Entry {
	t.Helper()
	e, ok := testRegistry(t).Lookup(gk)
	require.True(t, ok, gk.String())
	return e
}

func testRegistry(t *testing.T) *graph.Registry {
	t.Helper()
	reg, err := graph.NewRegistry(apps.New(), batch.New())
	require.NoError(t, err)
	return reg
}

// cached is what the kind's cache transform keeps of u (TransformPodFor for
// pods, TransformFor otherwise), from a copy.
func cached(t *testing.T, e graph.Entry, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	transform := corewatch.TransformFor(e)
	if e.GroupKind() == graph.PodGroupKind {
		transform = corewatch.TransformPodFor(testRegistry(t))
	}
	out, err := transform(u.DeepCopy())
	require.NoError(t, err)
	o, ok := out.(*unstructured.Unstructured)
	require.True(t, ok, "transformed into %T", out)
	return o.Object
}

// Kubernetes' own kinds read whole are listed and watched in protobuf and
// converted: each object must give, field for field and type for type, the
// cached object a JSON read of it gives, in a list, in the initial events of
// a watch, and in a change's event. (The conversion leaves out what the
// cache transform drops: managed fields, a workload's status, most of a
// pod.)
func TestNativeListWatchGivesWhatJSONGives(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := env.NewNamespace(t, "native", true)
	labels := map[string]string{"app": "vllm"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vllm", Labels: labels, Annotations: map[string]string{"model.aibom.dev/base": "meta-llama/Llama-3.1-8B-Instruct"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromString("25%"))}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec()},
		},
	}
	require.NoError(t, env.Client.Create(ctx, deploy))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vllm-0", Labels: labels}, Spec: podSpec()}
	require.NoError(t, env.Client.Create(ctx, pod))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "vllm", Image: "vllm/vllm-openai:v0.6.3", ImageID: "docker.io/vllm/vllm-openai@sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12",
		Ready: true, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
	}}}
	require.NoError(t, env.Client.Status().Update(ctx, pod))
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "eval"},
		Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: func() corev1.PodSpec { s := podSpec(); s.RestartPolicy = corev1.RestartPolicyNever; return s }()}},
	}
	require.NoError(t, env.Client.Create(ctx, job))

	dyn, err := dynamic.NewForConfig(env.Config)
	require.NoError(t, err)
	for _, tc := range []struct {
		entry graph.Entry
		name  string
	}{
		{lookup(t, schema.GroupKind{Group: "apps", Kind: "Deployment"}), deploy.Name},
		{lookup(t, graph.PodGroupKind), pod.Name},
		{lookup(t, schema.GroupKind{Group: "batch", Kind: "Job"}), job.Name},
	} {
		t.Run(tc.entry.Kind.Kind, func(t *testing.T) {
			lw, ok, err := corewatch.NativeListWatch(env.Config, nil, tc.entry)
			require.NoError(t, err)
			require.True(t, ok, "one of Kubernetes' own kinds, read whole")
			res := dyn.Resource(tc.entry.GVK().GroupVersion().WithResource(tc.entry.Resource)).Namespace(ns)
			want, err := res.Get(ctx, tc.name, metav1.GetOptions{})
			require.NoError(t, err)

			listed, err := lw.List(metav1.ListOptions{})
			require.NoError(t, err)
			list, ok := listed.(*unstructured.UnstructuredList)
			require.True(t, ok, "a list of %T", listed)
			require.NotEmpty(t, list.GetResourceVersion())
			var got *unstructured.Unstructured
			for i := range list.Items {
				if list.Items[i].GetNamespace() == ns && list.Items[i].GetName() == tc.name {
					got = &list.Items[i]
				}
			}
			require.NotNil(t, got, "listed")
			require.Equal(t, cached(t, tc.entry, want), cached(t, tc.entry, got))
			require.Empty(t, got.GetManagedFields(), "managed fields are left out")

			w, err := lw.Watch(metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
			require.NoError(t, err)
			defer w.Stop()
			changed := want.DeepCopy()
			changed.SetLabels(map[string]string{"app": "vllm", "touched": "yes"})
			want, err = res.Update(ctx, changed, metav1.UpdateOptions{})
			require.NoError(t, err)
			select {
			case ev := <-w.ResultChan():
				require.Equal(t, watch.Modified, ev.Type)
				u, ok := ev.Object.(*unstructured.Unstructured)
				require.True(t, ok, "an event of %T", ev.Object)
				require.Equal(t, cached(t, tc.entry, want), cached(t, tc.entry, u))
			case <-ctx.Done():
				t.Fatal("no event for the change")
			}
		})
	}
}

// A custom resource, or a kind read for its metadata only, stays on JSON.
func TestNativeListWatchIsForKubernetesOwnKindsReadWhole(t *testing.T) {
	_, ok, err := corewatch.NativeListWatch(env.Config, nil, lookup(t, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}))
	require.NoError(t, err)
	require.False(t, ok, "ReplicaSets are read for their metadata")
	custom := graph.Entry{Kind: kindAdapter{kind: "Widget", versions: []string{"v1"}}.Kinds()[0], Version: "v1"}
	_, ok, err = corewatch.NativeListWatch(env.Config, nil, custom)
	require.NoError(t, err)
	require.False(t, ok, "custom resources are served in JSON")
}
