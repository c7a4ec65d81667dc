package watch

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// typedOf decodes an unstructured object into a typed one.
func typedOf[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out))
	return out
}

// richPod is FullPodYAML with every kind of field the pod transforms keep or
// drop: init and ephemeral containers, commands, literal and referenced env,
// resources, mounts, probes, scheduling, and a status in full.
func richPod(t *testing.T) *corev1.Pod {
	p := typedOf[corev1.Pod](t, coretest.DecodeYAML(t, coretest.FullPodYAML))
	c := &p.Spec.Containers[0]
	c.Command = []string{"python3", "-m", "vllm.entrypoints.openai.api_server"}
	c.Env = append(c.Env, corev1.EnvVar{Name: "MODEL", Value: "meta-llama/Llama-3.1-8B-Instruct"}, corev1.EnvVar{Name: "EMPTY"})
	c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "cache", MountPath: "/root/.cache"}}
	c.Ports = []corev1.ContainerPort{{ContainerPort: 8000}}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health"}}}
	c.ImagePullPolicy = corev1.PullIfNotPresent
	p.Spec.InitContainers = []corev1.Container{{Name: "fetch", Image: "busybox:1.36", Command: []string{"sh", "-c", "true"}, TerminationMessagePath: "/dev/termination-log"}}
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox:1.36"}}}
	p.Spec.NodeName = "node-1"
	p.Spec.RestartPolicy = corev1.RestartPolicyAlways
	p.Spec.TerminationGracePeriodSeconds = ptr.To(int64(30))
	p.Spec.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}
	p.Status.HostIP = "192.168.0.1"
	p.Status.QOSClass = corev1.PodQOSBurstable
	p.Status.StartTime = &metav1.Time{}
	return p
}

// TestNativePruneKeepsWhatTheTransformsKeep: a pod or a Deployment read in
// protobuf and pruned before its conversion comes out of the cache transform
// exactly as it would whole, for a pod read whole (nothing controls it, or a
// kind no adapter declares) and one that is not; and the prune did drop what
// no transform keeps.
func TestNativePruneKeepsWhatTheTransformsKeep(t *testing.T) {
	reg := coretest.TestRegistry(t)
	sup := &Supervisor{Registry: reg}
	podEntry := coretest.EntryOf(t, reg, coretest.PodGVK)
	pods := &nativeListWatch{gvk: coretest.PodGVK, prune: pruneFor(podEntry)}
	whole := &nativeListWatch{gvk: coretest.PodGVK}
	for name, owners := range map[string][]metav1.OwnerReference{
		"bare pod":                          nil,
		"pod of a ReplicaSet":               {{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u1", Controller: ptr.To(true)}},
		"pod of a kind no adapter declares": {{APIVersion: "serving.example.com/v1", Kind: "ServingGroup", Name: "sg", UID: "u2", Controller: ptr.To(true)}},
	} {
		for shape, pod := range map[string]*corev1.Pod{"rich": richPod(t), "running": runningPod()} {
			pod.OwnerReferences = owners
			want, err := whole.unstructured(pod.DeepCopy())
			require.NoError(t, err)
			got, err := pods.unstructured(pod.DeepCopy())
			require.NoError(t, err)
			require.NotContains(t, got.Object["status"], "phase", "%s, %s: the status is pruned", name, shape)
			require.Empty(t, got.GetLabels(), "%s, %s: labels are pruned", name, shape)
			wantOut, err := TransformPodFor(reg)(want)
			require.NoError(t, err)
			gotOut, err := TransformPodFor(reg)(got)
			require.NoError(t, err)
			require.Equal(t, wantOut.(*unstructured.Unstructured).Object, gotOut.(*unstructured.Unstructured).Object, "%s, %s", name, shape)
			// And through the supervisor's transform, to the compact form.
			want, _ = whole.unstructured(pod.DeepCopy())
			got, _ = pods.unstructured(pod.DeepCopy())
			wantC, err := sup.transform(podEntry)(want)
			require.NoError(t, err)
			gotC, err := sup.transform(podEntry)(got)
			require.NoError(t, err)
			require.Equal(t, wantC, gotC, "%s, %s", name, shape)
		}
	}

	deployEntry := coretest.EntryOf(t, reg, coretest.DeployGVK)
	deploy := typedOf[appsv1.Deployment](t, coretest.DecodeYAML(t, trackedYAML))
	deployments := &nativeListWatch{gvk: coretest.DeployGVK, prune: pruneFor(deployEntry)}
	want, err := (&nativeListWatch{gvk: coretest.DeployGVK}).unstructured(deploy.DeepCopy())
	require.NoError(t, err)
	got, err := deployments.unstructured(deploy.DeepCopy())
	require.NoError(t, err)
	require.NotContains(t, got.Object["status"], "replicas", "the status is pruned")
	wantOut, err := sup.transform(deployEntry)(want)
	require.NoError(t, err)
	gotOut, err := sup.transform(deployEntry)(got)
	require.NoError(t, err)
	require.Equal(t, wantOut, gotOut)
}

// TestPruneToleratesOtherObjects: a prune handed an object of another type,
// or nil, leaves it as it is.
func TestPruneToleratesOtherObjects(t *testing.T) {
	require.NotPanics(t, func() {
		prunePod(&appsv1.Deployment{})
		prunePod((*corev1.Pod)(nil))
		prunePod(nil)
		pruneStatus((*appsv1.Deployment)(nil))
		pruneStatus(nil)
	})
	s := &metav1.Status{Status: metav1.StatusFailure, Message: "kept"}
	pruneStatus(s)
	require.Equal(t, &metav1.Status{Status: metav1.StatusFailure, Message: "kept"}, s, "a Status field that is not a struct is not a status")
}
