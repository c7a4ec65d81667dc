package compact

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// decodeJSON decodes a document as the watches do (integers to int64,
// every other number to float64).
func decodeJSON(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	require.NoError(t, utiljson.Unmarshal([]byte(doc), &m))
	return &unstructured.Unstructured{Object: m}
}

// A deployment as the watch decodes it, with every kind of JSON value an
// adapter could read: integers, integral and fractional floats, numbers too
// large for an int64, escapes, non-ASCII text, nulls, empty objects and lists.
const compactDeployment = `{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {
    "name": "llama", "namespace": "team-a", "uid": "0d5c1f1e-0000-4000-8000-000000000001",
    "resourceVersion": "4711", "generation": 3, "creationTimestamp": "2026-11-29T10:00:00Z",
    "deletionTimestamp": "2026-11-30T10:00:00Z", "deletionGracePeriodSeconds": 30,
    "generateName": "llama-", "finalizers": ["example.com/keep"],
    "labels": {"app": "llama"},
    "annotations": {"aibom.dev/model": "meta-llama/Llama-3.1-8B-Instruct", "note": "line\nbreak \"quoted\" \\ <tag> & \u2028 ünïcødé 🦙"},
    "ownerReferences": [
      {"apiVersion": "example.com/v1", "kind": "Graph", "name": "g", "uid": "0d5c1f1e-0000-4000-8000-000000000002", "controller": true, "blockOwnerDeletion": true},
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "0d5c1f1e-0000-4000-8000-000000000003"}
    ]
  },
  "spec": {
    "replicas": 4, "ratio": 1.0, "fraction": 0.9, "tiny": 1e-9, "huge": 1e300, "bigint": 123456789012345678901234567890,
    "negative": -17, "negzero": -0.0, "flag": false, "nothing": null, "empty": {}, "none": [],
    "template": {"spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.6.3",
      "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory-utilization", "0.9"],
      "env": [{"name": "CTRL", "value": "\u0001\u001f\t\r"}]}]}}
  }
}`

func TestRoundTrip(t *testing.T) {
	u := decodeJSON(t, compactDeployment)
	c, err := New(u)
	require.NoError(t, err)
	got, err := c.Unstructured()
	require.NoError(t, err)
	require.Equal(t, u.Object, got.Object, "the decoded object equals the cached one, value types included")
	ratio, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "ratio")
	require.IsType(t, float64(0), ratio, "an integral float stays a float")
	replicas, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "replicas")
	require.IsType(t, int64(0), replicas)
	require.True(t, json.Valid(c.raw))

	// Equal objects give equal bytes (keys sorted).
	again, err := New(decodeJSON(t, compactDeployment))
	require.NoError(t, err)
	require.Equal(t, c.raw, again.raw)
}

func TestInvalidUTF8BecomesReplacementCharacter(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "spec": map[string]any{"s": "a\xffb"}}}
	c, err := New(u)
	require.NoError(t, err)
	got, err := c.Unstructured()
	require.NoError(t, err)
	s, _, _ := unstructured.NestedString(got.Object, "spec", "s")
	require.Equal(t, "a\uFFFDb", s, "as encoding/json writes it")
}

func TestRefusesWhatJSONCannotHold(t *testing.T) {
	for name, v := range map[string]any{"NaN": math.NaN(), "Inf": math.Inf(1), "func": func() {}} {
		t.Run(name, func(t *testing.T) {
			_, err := New(&unstructured.Unstructured{Object: map[string]any{"kind": "Thing", "spec": map[string]any{"v": v}}})
			require.Error(t, err)
		})
	}
}

func TestMetadataAccessorsAnswerAsTheObjects(t *testing.T) {
	u := decodeJSON(t, compactDeployment)
	c, err := New(u)
	require.NoError(t, err)
	var obj client.Object = c
	require.Equal(t, u.GroupVersionKind(), obj.GetObjectKind().GroupVersionKind())
	require.Equal(t, u.GetName(), obj.GetName())
	require.Equal(t, u.GetGenerateName(), obj.GetGenerateName())
	require.Equal(t, u.GetNamespace(), obj.GetNamespace())
	require.Equal(t, u.GetUID(), obj.GetUID())
	require.Equal(t, u.GetResourceVersion(), obj.GetResourceVersion())
	require.Equal(t, u.GetGeneration(), obj.GetGeneration())
	require.Equal(t, u.GetCreationTimestamp(), obj.GetCreationTimestamp())
	require.Equal(t, u.GetDeletionTimestamp(), obj.GetDeletionTimestamp())
	require.Equal(t, u.GetDeletionGracePeriodSeconds(), obj.GetDeletionGracePeriodSeconds())
	require.Equal(t, u.GetLabels(), obj.GetLabels())
	require.Equal(t, u.GetAnnotations(), obj.GetAnnotations())
	require.Equal(t, u.GetOwnerReferences(), obj.GetOwnerReferences())
	require.Equal(t, u.GetFinalizers(), obj.GetFinalizers())
	require.Equal(t, metav1.GetControllerOf(u), metav1.GetControllerOfNoCopy(obj))

	// Absent metadata is absent, as on the unstructured object.
	bare, err := New(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "x"}}})
	require.NoError(t, err)
	require.Nil(t, bare.GetAnnotations())
	require.Nil(t, bare.GetOwnerReferences())
	require.Nil(t, bare.GetDeletionTimestamp())
}

func TestCopiesAreIsolated(t *testing.T) {
	c, err := New(decodeJSON(t, compactDeployment))
	require.NoError(t, err)
	want, err := c.Unstructured()
	require.NoError(t, err)

	// A reader changing its decoded object changes nothing cached.
	read, err := c.Unstructured()
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(read.Object, int64(99), "spec", "replicas"))
	read.SetAnnotations(map[string]string{"forged": "yes"})
	again, err := c.Unstructured()
	require.NoError(t, err)
	require.Equal(t, want.Object, again.Object)

	// A deep copy's metadata is its own; the JSON is the same.
	cp := c.DeepCopyObject().(*Object)
	cp.Annotations["forged"] = "yes"
	cp.OwnerReferences[0].Name = "other"
	cp.Labels = nil
	require.Equal(t, want.GetAnnotations(), c.GetAnnotations())
	require.Equal(t, want.GetOwnerReferences(), c.GetOwnerReferences())
	require.Equal(t, want.GetLabels(), c.GetLabels())
	fromCopy, err := cp.Unstructured()
	require.NoError(t, err)
	require.Equal(t, want.Object, fromCopy.Object)
	require.Nil(t, (*Object)(nil).DeepCopyObject())
}

// FuzzRoundTrip: any JSON object the watches could decode comes
// back from the compact form equal, value types included.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(compactDeployment))
	f.Add([]byte(`{"kind":"X","a":[1,1.0,-0.0,1e400,"\u0000",{"":null}]}`))
	f.Add([]byte(`{"kind":"X","metadata":{"name":"n","ownerReferences":[{"uid":"u","controller":true}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if err := utiljson.Unmarshal(data, &m); err != nil || m == nil {
			return
		}
		u := &unstructured.Unstructured{Object: m}
		c, err := New(u)
		if err != nil {
			return // metadata of the wrong type is never served by an API server; refusing it is safe
		}
		got, err := c.Unstructured()
		if err != nil {
			t.Fatalf("compact form does not decode: %v\n%s", err, c.raw)
		}
		if got.Object == nil {
			got.Object = map[string]any{}
		}
		require.Equal(t, m, got.Object)
	})
}
