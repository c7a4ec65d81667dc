package watch

import (
	"bytes"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
	"k8s.io/utils/ptr"
)

// runningPod is a pod as the API server stores it: defaulted, running.
func runningPod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "vllm-0001-abcd5d9c-xyz12", Namespace: "scale-001", UID: "0f0e6c1e-7a1b-4c2d-9e3f-123456789abc", ResourceVersion: "123456",
			Labels:          map[string]string{"app": "vllm-0001", "pod-template-hash": "abcd5d9c"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "vllm-0001-abcd5d9c", UID: "1f0e6c1e-7a1b-4c2d-9e3f-123456789abc", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"vllm\"}":{".":{},"f:image":{},"f:name":{}}}}}`)}}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.6.3", Args: []string{"--model", "meta-llama/Llama-3.1-8B-Instruct"},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To(int64(30)), DNSPolicy: corev1.DNSClusterFirst,
			SecurityContext: &corev1.PodSecurityContext{}, SchedulerName: "default-scheduler", EnableServiceLinks: ptr.To(true),
			PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority), Priority: ptr.To(int32(0)),
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "vllm", Image: "vllm/vllm-openai:v0.6.3",
			ImageID: "docker.io/vllm/vllm-openai@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Ready: true, Started: ptr.To(true)}}},
	}
}

// watchStream is n ADDED events of a running pod, framed and encoded as the
// API server sends them in mediaType.
func watchStream(b *testing.B, mediaType string, n int) ([]byte, runtime.SerializerInfo) {
	info, ok := runtime.SerializerInfoForMediaType(clientgoscheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		b.Fatalf("no serializer for %s", mediaType)
	}
	enc := clientgoscheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	var stream bytes.Buffer
	frames := info.StreamSerializer.Framer.NewFrameWriter(&stream)
	for range n {
		var obj, ev bytes.Buffer
		if err := enc.Encode(runningPod(), &obj); err != nil {
			b.Fatal(err)
		}
		if err := info.StreamSerializer.Serializer.Encode(&metav1.WatchEvent{Type: string(watch.Added), Object: runtime.RawExtension{Raw: obj.Bytes()}}, &ev); err != nil {
			b.Fatal(err)
		}
		if _, err := frames.Write(ev.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
	return stream.Bytes(), info
}

// A pod's watch event decoded into the unstructured object the cache
// transforms: from JSON as client-go decodes it for an unstructured
// informer, and from protobuf as nativeListWatch does (decoded typed, then
// converted).
func BenchmarkNativeWatchDecode(b *testing.B) {
	const n = 100
	b.Run("json", func(b *testing.B) {
		stream, info := watchStream(b, runtime.ContentTypeJSON, n)
		b.ReportAllocs()
		for b.Loop() {
			frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
			d := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), unstructured.UnstructuredJSONScheme)
			for range n {
				if _, obj, err := d.Decode(); err != nil {
					b.Fatal(err)
				} else if _, ok := obj.(*unstructured.Unstructured); !ok {
					b.Fatalf("decoded %T", obj)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "us/event")
	})
	b.Run("protobuf", func(b *testing.B) {
		stream, info := watchStream(b, runtime.ContentTypeProtobuf, n)
		objects := clientgoscheme.Codecs.WithoutConversion().DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion)
		l := &nativeListWatch{gvk: corev1.SchemeGroupVersion.WithKind("Pod"), prune: prunePod}
		b.ReportAllocs()
		for b.Loop() {
			frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
			d := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), objects)
			for range n {
				_, obj, err := d.Decode()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.unstructured(obj); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "us/event")
	})
}
