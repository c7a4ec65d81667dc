// Package supervisor tests the watch supervisor (Design 004) against a real
// API server: kinds that appear, disappear, change versions, break their
// conversion webhook or are denied by RBAC never take the manager or another
// kind down.
package supervisor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var env *harness.Env

const (
	eventually = 60 * time.Second
	tick       = 100 * time.Millisecond
	interval   = 300 * time.Millisecond
	group      = "test.aibom.dev"
)

func TestMain(m *testing.M) {
	var err error
	env, err = harness.StartEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// kindAdapter is a third-party adapter for a test kind with a pod template
// at spec.template; it records the version it was handed.
type kindAdapter struct {
	kind     string
	versions []string
}

func (a kindAdapter) Name() string { return "test-" + strings.ToLower(a.kind) }
func (a kindAdapter) Kinds() []adapter.Kind {
	return []adapter.Kind{{Group: group, Kind: a.kind, Resource: strings.ToLower(a.kind) + "s", Versions: a.versions, Role: adapter.RoleTracked}}
}
func (a kindAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	tmpl, _, err := unstructured.NestedMap(obj.Object, "spec", "template")
	if err != nil {
		return adapter.Findings{}, err
	}
	f, err := podtemplate.ScrapeTemplate(tmpl, "spec.template", podtemplate.Options{})
	f.Properties = append(f.Properties, adapter.Property{Name: "test.servedVersion", Value: obj.GetAPIVersion()})
	return f, err
}

// crd builds a CRD for a test kind serving the given versions (the first is
// the storage version).
func crd(kind string, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	plural := strings.ToLower(kind) + "s"
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
		},
	}
	for i, v := range versions {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: i == 0,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: ptr.To(true),
			}},
		})
	}
	return c
}

func installCRD(t *testing.T, c *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	require.NoError(t, envtest.WaitForCRDs(env.Config, nil, envtest.CRDInstallOptions{}))
	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{c}})
	require.NoError(t, err)
}

func newNamespace(t *testing.T) string {
	t.Helper()
	return env.NewNamespace(t, "s", true)
}

func gadget(kind, version, name string) string {
	return fmt.Sprintf(`
apiVersion: %s/%s
kind: %s
metadata: {name: %s}
spec:
  template:
    spec:
      containers: [{name: main, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
`, group, version, kind, name)
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3"}]}
`

func waitAIBOM(t *testing.T, ns string, gk schema.GroupKind, name string, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	var got *v1alpha1.AIBOM
	key := harness.AIBOMKey(ns, gk, name)
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		if env.Client.Get(context.Background(), key, a) != nil || meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady) == nil {
			return false
		}
		got = a
		return cond == nil || cond(a)
	}, eventually, tick, "AIBOM %s", key)
	return got
}

func startController(t *testing.T, opts harness.ControllerOptions, adapters ...adapter.Adapter) *harness.Controller {
	t.Helper()
	if opts.DiscoveryInterval == 0 {
		opts.DiscoveryInterval = interval
	}
	c, err := env.StartControllerWith(opts, adapters...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	return c
}

// metricValue reads a gauge or counter with a kind label; -1 when absent.
func metricValue(name, kind string) float64 {
	if v, ok := harness.LookupMetric(name, map[string]string{"kind": kind}); ok {
		return v
	}
	return -1
}

func warningEvents(t *testing.T, crdName, reason string) int {
	t.Helper()
	list := &eventsv1.EventList{}
	require.NoError(t, env.Client.List(context.Background(), list))
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name == crdName && e.Reason == reason {
			n++
		}
	}
	return n
}

var deploymentGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}

// A kind whose conversion webhook is down: the manager starts, other kinds
// are served, the kind is reported unhealthy once; fixing the CRD recovers
// the watch and the objects created meanwhile get AIBOMs.
func TestBrokenConversionWebhookIsIsolatedAndRecovers(t *testing.T) {
	ctx := context.Background()
	c := crd("Gadget", "v1", "v2")
	c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ConversionReviewVersions: []string{"v1"},
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/convert")},
		},
	}
	installCRD(t, c)
	ns := newNamespace(t)
	env.MustApply(t, ns, gadget("Gadget", "v1", "before"))

	gadgets := kindAdapter{kind: "Gadget", versions: []string{"v2", "v1"}}
	startController(t, harness.ControllerOptions{}, apps.New(), gadgets)
	env.MustApply(t, ns, deployment)
	waitAIBOM(t, ns, deploymentGK, "web", nil)

	const kind = "Gadget.test.aibom.dev"
	require.Eventually(t, func() bool {
		return metricValue("aibom_watch_healthy", kind) == 0 && metricValue("aibom_watch_errors_total", kind) > 1
	}, eventually, tick)
	require.Eventually(t, func() bool { return warningEvents(t, c.Name, "WatchUnhealthy") == 1 }, eventually, tick)
	env.MustApply(t, ns, gadget("Gadget", "v1", "meanwhile"))

	// Fix the CRD: no conversion needed any more.
	fixed := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: c.Name}, fixed))
	require.GreaterOrEqual(t, metricValue("aibom_watch_errors_total", kind), 2.0)
	require.Equal(t, 1, warningEvents(t, c.Name, "WatchUnhealthy"), "one Event per outage, not per retry")
	fixed.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	require.NoError(t, env.Client.Update(ctx, fixed))

	gk := schema.GroupKind{Group: group, Kind: "Gadget"}
	for _, name := range []string{"before", "meanwhile"} {
		a := waitAIBOM(t, ns, gk, name, nil)
		require.Contains(t, a.Status.Document, group+"/v2", "the adapter gets its preferred served version")
	}
	require.Eventually(t, func() bool { return metricValue("aibom_watch_healthy", kind) == 1 }, eventually, tick)
}

// A CRD installed after the controller started is picked up without a
// restart; a CRD deleted while watched stops its watch, keeps its AIBOMs and
// leaves other kinds working.
func TestCRDInstalledAfterStartAndDeletedWhileWatched(t *testing.T) {
	ctx := context.Background()
	const kind = "Widget.test.aibom.dev"
	missesBefore := metricValue("aibom_closure_unreadable_total", kind)
	startController(t, harness.ControllerOptions{}, apps.New(), kindAdapter{kind: "Widget", versions: []string{"v1"}})
	ns := newNamespace(t)
	env.MustApply(t, ns, deployment)
	waitAIBOM(t, ns, deploymentGK, "web", nil)
	// A kind the cluster does not serve has no objects: nothing of it is
	// missing below the Deployment, and its closure does not ask for it.
	require.Equal(t, missesBefore, metricValue("aibom_closure_unreadable_total", kind), "a kind not served is no closure miss")

	c := crd("Widget", "v1")
	installCRD(t, c)
	env.MustApply(t, ns, gadget("Widget", "v1", "late"))
	gk := schema.GroupKind{Group: group, Kind: "Widget"}
	kept := waitAIBOM(t, ns, gk, "late", nil)
	require.Eventually(t, func() bool { return metricValue("aibom_watch_healthy", kind) == 1 }, eventually, tick)

	require.NoError(t, env.Client.Delete(ctx, c))
	require.Eventually(t, func() bool {
		err := env.Client.Get(ctx, client.ObjectKey{Name: c.Name}, &apiextensionsv1.CustomResourceDefinition{})
		return apierrors.IsNotFound(err) && metricValue("aibom_watch_healthy", kind) == 0
	}, eventually, tick)

	// Other kinds still work, and the Widget's AIBOM was kept.
	env.MustApply(t, ns, strings.ReplaceAll(deployment, "web", "after"))
	waitAIBOM(t, ns, deploymentGK, "after", nil)
	still := &v1alpha1.AIBOM{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(kept), still))
	require.Equal(t, kept.UID, still.UID)
}

// Version negotiation: the adapter receives the most preferred version the
// cluster serves, and a newly served preferred version is picked up.
func TestAdapterReceivesThePreferredServedVersion(t *testing.T) {
	ctx := context.Background()
	c := crd("Sprocket", "v1")
	installCRD(t, c)
	ns := newNamespace(t)
	env.MustApply(t, ns, gadget("Sprocket", "v1", "s"))
	startController(t, harness.ControllerOptions{}, kindAdapter{kind: "Sprocket", versions: []string{"v2", "v1"}})
	gk := schema.GroupKind{Group: group, Kind: "Sprocket"}
	a := waitAIBOM(t, ns, gk, "s", nil)
	require.Contains(t, a.Status.Document, `"`+group+`/v1"`, "only v1 is served")

	both := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: c.Name}, both))
	both.Spec.Versions = crd("Sprocket", "v1", "v2").Spec.Versions
	require.NoError(t, env.Client.Update(ctx, both))
	waitAIBOM(t, ns, gk, "s", func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, `"`+group+`/v2"`)
	})
}

// RBAC denial for one third-party kind: that kind is reported unhealthy,
// everything else works. The controller runs as a user bound to exactly the
// shipped ClusterRole, which does not grant the test kind.
func TestRBACDenialForOneKindLeavesTheRestWorking(t *testing.T) {
	ctx := context.Background()
	installCRD(t, crd("Locked", "v1"))
	ns := newNamespace(t)
	env.MustApply(t, ns, gadget("Locked", "v1", "hidden"))

	role := &rbacv1.ClusterRole{}
	data, err := os.ReadFile(repoFile(t, "config/rbac/role.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, role))
	role.Name = "aibom-controller-test"
	require.NoError(t, env.Client.Create(ctx, role))
	user, err := env.Env.AddUser(envtest.User{Name: "aibom-controller", Groups: []string{"aibom-controllers"}}, env.Config)
	require.NoError(t, err)
	require.NoError(t, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "aibom-controller-test"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "aibom-controller", APIGroup: "rbac.authorization.k8s.io"}},
	}))

	startController(t, harness.ControllerOptions{Config: user.Config()}, apps.New(), kindAdapter{kind: "Locked", versions: []string{"v1"}})
	env.MustApply(t, ns, deployment)
	waitAIBOM(t, ns, deploymentGK, "web", nil)
	const kind = "Locked.test.aibom.dev"
	require.Eventually(t, func() bool {
		return metricValue("aibom_watch_healthy", kind) == 0 && metricValue("aibom_watch_errors_total", kind) > 0
	}, eventually, tick)
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: reconcile.AIBOMName(schema.GroupKind{Group: group, Kind: "Locked"}, "hidden")}, &v1alpha1.AIBOM{})
	require.True(t, apierrors.IsNotFound(err))

	// Seed §1: a StatefulSet controlled by an object of the kind the
	// controller may not read is still reported, and the miss is counted.
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  ownerReferences: [{apiVersion: `+group+`/v1, kind: Locked, name: hidden, controller: true}]
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: main, image: "ollama/ollama:0.3.14"}]}
`)
	waitAIBOM(t, ns, schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, "db", nil)
	require.Positive(t, unresolved(kind, "forbidden"))
}

// unresolved reads aibom_rollup_unresolved_total{kind,reason}.
func unresolved(kind, reason string) float64 {
	v, _ := harness.LookupMetric("aibom_rollup_unresolved_total", map[string]string{"kind": kind, "reason": reason})
	return v
}

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	return root + "/" + rel
}
