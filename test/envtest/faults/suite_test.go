// Package faults runs the controller through faults against a real API
// server (issue #8): the kube-apiserver restarted while reconciles are in
// flight, owners deleted with their children lingering or re-created under
// the same name, and an owner kind's CRD deleted while its objects and their
// children exist. After every fault the conservation invariant (every
// tracked workload in exactly one AIBOM) is checked against the cluster.
package faults

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/adapters/lws"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
	nsCounter  atomic.Int64
)

const (
	// eventually is generous: the suite runs on loaded machines, and after an
	// API server restart client-go's reflectors back off before they
	// reconnect.
	eventually = 90 * time.Second
	tick       = 200 * time.Millisecond
	// discoveryInterval lets the supervisor see CRDs come and go, and probe
	// watches back to healthy after the restart.
	discoveryInterval = time.Second
	gizmoGroup        = "faults.aibom.dev"
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var err error
	env, err = harness.StartEnvWith(harness.EnvOptions{CRDDirs: []string{"test/crds/lws"}, RestartableAPIServer: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	controller, err = env.StartControllerWith(harness.ControllerOptions{DiscoveryInterval: discoveryInterval},
		apps.New(), batch.New(), lws.New(), gizmoAdapter{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest: start controller:", err)
		return 1
	}
	defer func() { _ = controller.Stop() }()
	return m.Run()
}

// gizmoAdapter tracks Gizmo, a test kind in its own group whose CRD a test
// installs and deletes; its pod template is spec.template.
type gizmoAdapter struct{}

func (gizmoAdapter) Name() string { return "test-gizmo" }
func (gizmoAdapter) Kinds() []adapter.Kind {
	return []adapter.Kind{{Group: gizmoGroup, Kind: "Gizmo", Resource: "gizmos", Versions: []string{"v1"}, Role: adapter.RoleTracked}}
}
func (gizmoAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	tmpl, _, err := unstructured.NestedMap(obj.Object, "spec", "template")
	if err != nil {
		return adapter.Findings{}, err
	}
	return podtemplate.ScrapeTemplate(tmpl, "spec.template", podtemplate.Options{})
}

// newNamespace creates a fresh namespace opted in to AIBOMs.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("f%d-%s", nsCounter.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	if len(name) > 63 {
		name = name[:63]
	}
	name = strings.TrimRight(name, "-")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{core.OptInLabel: "true"}}}
	require.NoError(t, env.Client.Create(context.Background(), ns))
	return name
}

// apply creates the objects of a YAML stream in namespace ns, parent-first,
// with their status, and returns them as created.
func apply(t *testing.T, ns, yaml string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.Decode(t.Name(), []byte(yaml))
	require.NoError(t, err)
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	created, err := manifest.Apply(context.Background(), env.Client, objs)
	require.NoError(t, err)
	return created
}

// applyErr is apply for a goroutine.
func applyErr(ns, yaml string) error {
	objs, err := manifest.Decode(ns, []byte(yaml))
	if err != nil {
		return err
	}
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	_, err = manifest.Apply(context.Background(), env.Client, objs)
	return err
}

// conservation checks the invariant in the given namespaces.
func conservation(namespaces ...string) harness.Conservation {
	return harness.Conservation{Reader: env.Client, Registry: controller.Registry, Namespaces: namespaces}
}

func aibomKey(ns string, gk schema.GroupKind, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: ns, Name: core.AIBOMName(gk, name)}
}

var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	jobGK         = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobGK     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	lwsGK         = schema.GroupKind{Group: "leaderworkerset.x-k8s.io", Kind: "LeaderWorkerSet"}
	gizmoGK       = schema.GroupKind{Group: gizmoGroup, Kind: "Gizmo"}
)

// getAIBOM reads an AIBOM; nil when it does not exist.
func getAIBOM(t *testing.T, key client.ObjectKey) *v1alpha1.AIBOM {
	t.Helper()
	a := &v1alpha1.AIBOM{}
	if err := env.Client.Get(context.Background(), key, a); err != nil {
		require.True(t, client.IgnoreNotFound(err) == nil, "get AIBOM %s: %v", key, err)
		return nil
	}
	return a
}

// aibomUIDs maps every AIBOM in the namespaces to its object UID.
func aibomUIDs(t *testing.T, namespaces ...string) map[client.ObjectKey]string {
	t.Helper()
	out := map[client.ObjectKey]string{}
	for _, ns := range namespaces {
		list := &v1alpha1.AIBOMList{}
		require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
		for _, a := range list.Items {
			out[client.ObjectKeyFromObject(&a)] = string(a.UID)
		}
	}
	return out
}

// digestOf is a distinct, valid sha256 hex per label.
func digestOf(label string) string {
	var b strings.Builder
	for b.Len() < 64 {
		fmt.Fprintf(&b, "%x", []byte(label))
	}
	return "d" + b.String()[:63]
}

// podYAML is a pod controlled by (ownerAPIVersion, ownerKind, owner) whose
// container reports the given digest, as a kubelet writes it.
func podYAML(name, ownerAPIVersion, ownerKind, owner, container, image, digest string) string {
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
`, name, ownerAPIVersion, ownerKind, owner, container, image, imageRepo(image), digest)
}

func imageRepo(image string) string {
	repo, _, _ := strings.Cut(image, ":")
	if strings.Count(repo, "/") == 1 {
		return "docker.io/" + repo
	}
	return repo
}

// deploymentChain is a vLLM Deployment with the ReplicaSet and running Pod
// kube-controller-manager and a kubelet would produce; the pod runs digest.
func deploymentChain(name, digest string) string {
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
---`, name) + podYAML(name+"-rs-p0", "apps/v1", "ReplicaSet", name+"-rs", "vllm", "vllm/vllm-openai:v0.6.3", digest)
}

// hasDigest is true when the AIBOM exists and its document names digest.
func hasDigest(t *testing.T, key client.ObjectKey, digest string) bool {
	a := getAIBOM(t, key)
	return a != nil && strings.Contains(a.Status.Document, digest)
}

// requireSameAIBOMs checks that every AIBOM of before that still should
// exist (keep says so) exists with the same object UID: it was neither
// deleted nor deleted and re-created.
func requireSameAIBOMs(t *testing.T, before map[client.ObjectKey]string, keep func(client.ObjectKey) bool) {
	t.Helper()
	checked := 0
	for key, uid := range before {
		if !keep(key) {
			continue
		}
		a := getAIBOM(t, key)
		require.NotNil(t, a, "AIBOM %s was deleted although its workload still exists as a root", key)
		require.Equal(t, uid, string(a.UID), "AIBOM %s was deleted and re-created", key)
		checked++
	}
	t.Logf("%d AIBOMs kept their identity", checked)
}
