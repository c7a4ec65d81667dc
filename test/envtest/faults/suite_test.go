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
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/adapters/lws"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
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
	return env.NewNamespace(t, "f", true)
}

// applyErr is env.Apply for a goroutine.
func applyErr(ns, yaml string) error {
	_, err := env.Apply(context.Background(), ns, yaml)
	return err
}

// conservation checks the invariant in the given namespaces.
func conservation(namespaces ...string) harness.Conservation {
	return env.Conservation(controller, namespaces...)
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

// digestOf is a distinct, valid sha256 hex per label.
func digestOf(label string) string { return harness.PatternDigest("d", label) }

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
