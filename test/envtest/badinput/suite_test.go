// Package badinput is the envtest suite for hostile and malformed input
// (issue #8): third-party objects the API server stores but no operator
// would write (wrong types where the scrapers read, nulls, thousands of
// entries, deeply nested junk), workloads whose document is far over the
// inline cap, ownerReferences that cross namespaces, and tenant pods that
// imitate a workload's pods. The controller must keep running, explain every
// failure on the AIBOM and in an Event, and never attribute what it does not
// own.
//
// One control plane serves the test CRDs of every operator (their spec is
// x-kubernetes-preserve-unknown-fields, so wrong types are stored as
// written), with one controller running every in-tree adapter.
package badinput

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/test/crds"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var err error
	env, err = harness.StartEnv(crds.Dir("dynamo/v1beta1"), crds.Dir("grove"), crds.Dir("lws"), crds.Dir("nim"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "envtest: stop control plane:", err)
		}
	}()
	adapters := harness.InTreeAdapters()
	// Failed scrapes are retried every 2s, so that a fixed object recovers
	// within a test's deadline.
	controller, err = env.StartControllerWith(harness.ControllerOptions{ScrapeRetry: 2 * time.Second}, adapters...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest: start controller:", err)
		return 1
	}
	defer func() {
		if err := controller.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "envtest: stop controller:", err)
		}
	}()
	return m.Run()
}

// Generous deadlines: the machine running the suite may be loaded.
const (
	eventually = 60 * time.Second
	tick       = 100 * time.Millisecond
)

var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	nimGK         = schema.GroupKind{Group: "apps.nvidia.com", Kind: "NIMService"}
	dgdGK         = schema.GroupKind{Group: "nvidia.com", Kind: "DynamoGraphDeployment"}
)

// newNamespace creates a fresh namespace opted in to AIBOMs.
func newNamespace(t *testing.T) string {
	t.Helper()
	return env.NewNamespace(t, "bad", true)
}

// create creates one object built in Go (for shapes YAML cannot carry
// comfortably: thousands of entries, deep nesting).
func create(t *testing.T, ns string, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	obj.SetNamespace(ns)
	require.NoError(t, env.Client.Create(context.Background(), obj))
	return obj
}

// waitAIBOM waits until the AIBOM of (gk, name) exists and cond holds, and
// returns it; on timeout it fails with the last state seen.
func waitAIBOM(t *testing.T, ns string, gk schema.GroupKind, name string, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	key := harness.AIBOMKey(ns, gk, name)
	var mu sync.Mutex
	var got, last *v1alpha1.AIBOM
	ok := assert.Eventually(quiet{}, func() bool {
		a := &v1alpha1.AIBOM{}
		if err := env.Client.Get(context.Background(), key, a); err != nil {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		last = a
		if cond != nil && !cond(a) {
			return false
		}
		got = a
		return true
	}, eventually, tick)
	mu.Lock()
	defer mu.Unlock()
	if !ok {
		if last != nil {
			doc := last.Status.Document
			if len(doc) > 4000 {
				doc = doc[:4000] + "..."
			}
			t.Fatalf("AIBOM %s of %s %s never satisfied the condition; last seen: conditions=%+v absorbed=%v document=%s",
				key.Name, gk.Kind, name, last.Status.Conditions, last.Status.Absorbed, doc)
		}
		t.Fatalf("AIBOM %s of %s %s never appeared", key.Name, gk.Kind, name)
	}
	return got
}

// quiet lets assert.Eventually report nothing itself.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}

// ready is a waitAIBOM condition: Ready is True.
func ready(a *v1alpha1.AIBOM) bool {
	c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue
}

// readyWith is a waitAIBOM condition: Ready is True and the document
// contains s.
func readyWith(s string) func(*v1alpha1.AIBOM) bool {
	return func(a *v1alpha1.AIBOM) bool { return ready(a) && strings.Contains(a.Status.Document, s) }
}

// scrapeFailed is a waitAIBOM condition: Ready is False with reason
// ScrapeFailed.
func scrapeFailed(a *v1alpha1.AIBOM) bool {
	c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonScrapeFailed
}

// waitEvent waits for an Event regarding the named object with the given
// reason, and returns its note.
func waitEvent(t *testing.T, ns, kind, name, reason string) string {
	t.Helper()
	var note string
	require.Eventually(t, func() bool {
		list := &eventsv1.EventList{}
		if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
				note = e.Note
				return true
			}
		}
		return false
	}, eventually, tick, "no %s Event regarding %s %s/%s", reason, kind, ns, name)
	return note
}

// outcomes reads aibom_workload_reconcile_outcomes_total{kind,outcome} from
// the process's metrics registry.
func outcomes(kind, outcome string) float64 {
	return harness.MetricValue("aibom_workload_reconcile_outcomes_total", map[string]string{"kind": kind, "outcome": outcome})
}

// digestOf is a distinct, valid hex digest per label.
func digestOf(label string) string { return harness.SHA256Hex(label) }

// lowDigest sorts before every digestOf value (they start with "a"): were
// a foreign pod attributed, digest resolution, which picks the lexically
// smallest digest on a tie, would show it.
func lowDigest(n int) string {
	return fmt.Sprintf("%064x", n)
}

// runningPod renders a pod with one container "main" running image at
// digest, with labels (a YAML flow map) and ownerReferences (a YAML flow
// list, may be "[]").
func runningPod(name, labels, ownerRefs, image, digest string) string {
	repo, _, _ := document.ParseImage(image)
	return fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: %s
  ownerReferences: %s
spec:
  containers: [{name: main, image: %q}]
status:
  phase: Running
  containerStatuses:
  - {name: main, image: %q, imageID: "%s@sha256:%s", ready: true, restartCount: 0, state: {running: {}}}
`, name, labels, ownerRefs, image, image, repo, digest)
}

// setPodDigest rewrites the running digest of a pod's "main" container, as
// a kubelet would after a restart on a new image.
func setPodDigest(t *testing.T, ns, name, image, digest string) {
	t.Helper()
	repo, _, _ := document.ParseImage(image)
	pod := &corev1.Pod{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod))
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "main", Image: image, ImageID: repo + "@sha256:" + digest, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	}}
	require.NoError(t, env.Client.Status().Update(context.Background(), pod))
}
