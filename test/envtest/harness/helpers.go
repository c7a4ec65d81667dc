package harness

// Helpers the envtest suites share: namespaces, applying YAML streams, AIBOM
// keys, the process's metrics, fake digests and the YAML of common chains.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

// nsCounter numbers the namespaces NewNamespace creates, process-wide (one
// sequence across every Env of a test binary).
var nsCounter atomic.Int64

// NewNamespace creates a fresh namespace and returns its name:
// prefix<n>-<the test's name>, lower case, with "/", "." and "_" replaced by
// "-", cut to 63 characters without a trailing "-"; n counts the namespaces
// of the test binary. An opted-in namespace carries graph.OptInLabel "true";
// SetOptIn sets a namespace's opt-in label to value ("true" or "false").
func (e *Env) SetOptIn(t testing.TB, ns, value string) {
	t.Helper()
	n := &corev1.Namespace{}
	require.NoError(t, e.Client.Get(context.Background(), client.ObjectKey{Name: ns}, n))
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[graph.OptInLabel] = value
	require.NoError(t, e.Client.Update(context.Background(), n))
}

// otherwise it has no labels.
func (e *Env) NewNamespace(t testing.TB, prefix string, optedIn bool) string {
	t.Helper()
	name := fmt.Sprintf("%s%d-%s", prefix, nsCounter.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	name = strings.NewReplacer(".", "-", "_", "-").Replace(name)
	if len(name) > 63 {
		name = name[:63]
	}
	name = strings.TrimRight(name, "-")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if optedIn {
		ns.Labels = map[string]string{graph.OptInLabel: "true"}
	}
	require.NoError(t, e.Client.Create(context.Background(), ns))
	return name
}

// Apply creates the objects of a YAML stream in namespace ns with the test's
// client, parent-first (manifest.Apply: owner UIDs resolved by name, status
// written through the status subresource), and returns them as created. It
// does not need a *testing.T, so a goroutine can call it; decoding errors
// name the stream after ns.
func (e *Env) Apply(ctx context.Context, ns, yaml string) ([]*unstructured.Unstructured, error) {
	return e.apply(ctx, ns, ns, yaml)
}

// MustApply is Apply that fails the test on an error; decoding errors name
// the stream after the test.
func (e *Env) MustApply(t testing.TB, ns, yaml string) []*unstructured.Unstructured {
	t.Helper()
	created, err := e.apply(context.Background(), t.Name(), ns, yaml)
	require.NoError(t, err)
	return created
}

func (e *Env) apply(ctx context.Context, source, ns, yaml string) ([]*unstructured.Unstructured, error) {
	objs, err := manifest.Decode(source, []byte(yaml))
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	return manifest.Apply(ctx, e.Client, objs)
}

// AIBOMKey is the key of the AIBOM of the workload (gk, name) in ns.
func AIBOMKey(ns string, gk schema.GroupKind, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: ns, Name: reconcile.AIBOMName(gk, name)}
}

// AIBOMUIDs maps every AIBOM in the namespaces to its object UID.
func (e *Env) AIBOMUIDs(t testing.TB, namespaces ...string) map[client.ObjectKey]string {
	t.Helper()
	out := map[client.ObjectKey]string{}
	for _, ns := range namespaces {
		list := &v1alpha1.AIBOMList{}
		require.NoError(t, e.Client.List(context.Background(), list, client.InNamespace(ns)))
		for _, a := range list.Items {
			out[client.ObjectKeyFromObject(&a)] = string(a.UID)
		}
	}
	return out
}

// InTreeAdapters returns every in-tree adapter, in intree.Names order.
func InTreeAdapters() []adapter.Adapter {
	all := intree.All()
	adapters := make([]adapter.Adapter, 0, len(all))
	for _, n := range intree.Names() {
		adapters = append(adapters, all[n])
	}
	return adapters
}

// MetricValue reads a counter or gauge of controller-runtime's
// metrics.Registry (every controller of the test process writes into it):
// the first series of the family name whose labels include labels. It is 0
// when there is no such series or the registry cannot be gathered.
func MetricValue(name string, labels map[string]string) float64 {
	v, _, err := findMetric(name, labels)
	if err != nil {
		return 0
	}
	return v
}

// LookupMetric is MetricValue that tells an absent series (ok false) from
// a zero one. It searches whatever the registry gathered, even when
// gathering reported an error.
func LookupMetric(name string, labels map[string]string) (value float64, ok bool) {
	v, ok, _ := findMetric(name, labels)
	return v, ok
}

func findMetric(name string, labels map[string]string) (float64, bool, error) {
	families, err := metrics.Registry.Gather()
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue(), true, err
			}
			return m.GetCounter().GetValue(), true, err
		}
	}
	return 0, false, err
}

// SHA256Hex is the hex sha256 of s: a distinct, valid image digest per
// label.
func SHA256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// PatternDigest is a distinct, valid image digest per label that shows the
// label: lead (one hex digit) followed by the label's bytes in hex,
// repeated, 64 hex digits in all.
func PatternDigest(lead, label string) string {
	var b strings.Builder
	for b.Len() < 64 {
		fmt.Fprintf(&b, "%x", []byte(label))
	}
	return lead + b.String()[:63]
}

// ControllerRef is a controller ownerReference (blocking owner deletion) to
// owner, with its UID.
func ControllerRef(owner *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}
}

// PodYAML renders a running pod controlled by (ownerAPIVersion, ownerKind,
// owner) with one container whose runtime reports digest, as a kubelet
// writes it (imageID in the image's registry-qualified repository).
func PodYAML(name, ownerAPIVersion, ownerKind, owner, container, image, digest string) string {
	repo, _, _ := document.ParseImage(image)
	return fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
  ownerReferences: [{apiVersion: %[2]s, kind: %[3]s, name: %[4]s, controller: true, blockOwnerDeletion: true}]
spec:
  containers: [{name: %[5]s, image: %[6]q}]
status:
  phase: Running
  containerStatuses:
  - {name: %[5]s, image: %[6]q, imageID: "%[7]s@sha256:%[8]s", ready: true, restartCount: 0, state: {running: {}}}
`, name, ownerAPIVersion, ownerKind, owner, container, image, repo, digest)
}

// DeploymentChain is a vLLM Deployment "name" with the ReplicaSet
// "name-rs" and running Pod "name-rs-p0" that kube-controller-manager and a
// kubelet would produce; the pod runs digest.
func DeploymentChain(name, digest string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: %[1]s-rs
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3"}]}
---`, name) + PodYAML(name+"-rs-p0", "apps/v1", "ReplicaSet", name+"-rs", "vllm", "vllm/vllm-openai:v0.6.3", digest)
}
