// Package profiles is the envtest suite of declarative adapters loaded from
// AIBOMAdapterProfile objects: a profile-defined kind rolls up its
// Deployment -> ReplicaSet -> Pod chain exactly like a Go adapter's, and a
// profile created, edited or broken takes effect without a restart.
package profiles

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/profileloader"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/test/crds"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
)

const (
	eventually = 30 * time.Second
	tick       = 100 * time.Millisecond
	digest     = "2222222222222222222222222222222222222222222222222222222222222222"
	// removalGrace is how long the AIBOMs of a deleted profile's kinds stay.
	removalGrace = 4 * time.Second
)

var (
	widgetGK     = schema.GroupKind{Group: "widgets.test.aibom.dev", Kind: "Widget"}
	deploymentGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if env, err = harness.StartEnv(crds.Dir("profiles")); err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer env.Stop()
	static := []adapter.Adapter{apps.New(), batch.New()}
	if controller, err = env.StartController(static...); err != nil {
		fmt.Fprintln(os.Stderr, "envtest: start controller:", err)
		return 1
	}
	defer controller.Stop()
	loaded, err := profileloader.Setup(controller.Manager, &profileloader.Loader{
		Client: controller.Manager.GetClient(), Registry: controller.Registry, Static: static,
		Watches: controller.Supervisor, Roots: controller.Reconciler, Log: ctrl.Log.WithName("adapter-profiles"),
		RemovalGrace: removalGrace,
	})
	if err != nil || !loaded {
		fmt.Fprintln(os.Stderr, "envtest: adapter profile loader:", loaded, err)
		return 1
	}
	return m.Run()
}

// widgetProfile tracks Widget: its model at spec.model; extra rules are
// appended to its rules.
func widgetProfile(name, extraRules string) string {
	return `
apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: ` + name + `}
spec:
  version: 0.1.0
  kinds:
  - group: widgets.test.aibom.dev
    kind: Widget
    resource: widgets
    versions: [v1]
    role: tracked
    podOwners: [{group: apps, kind: ReplicaSet}]
    rules:
      podTemplates: [{path: spec.template}]
      models: [{path: spec.model}]
` + extraRules
}

const widgetChain = `
apiVersion: widgets.test.aibom.dev/v1
kind: Widget
metadata: {name: gizmo}
spec:
  model: "Qwen/Qwen3-8B"
  template:
    spec: {containers: [{name: server, image: "ghcr.io/example/server:1.0"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gizmo-server
  ownerReferences: [{apiVersion: widgets.test.aibom.dev/v1, kind: Widget, name: gizmo, controller: true}]
spec:
  selector: {matchLabels: {app: gizmo}}
  template:
    metadata: {labels: {app: gizmo}}
    spec: {containers: [{name: server, image: "ghcr.io/example/server:1.0", args: ["--model", "Qwen/Qwen3-8B"]}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: gizmo-server-5d4f
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: gizmo-server, controller: true}]
spec:
  selector: {matchLabels: {app: gizmo}}
  template:
    metadata: {labels: {app: gizmo}}
    spec: {containers: [{name: server, image: "ghcr.io/example/server:1.0"}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: gizmo-server-5d4f-abcde
  labels: {app: gizmo}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: gizmo-server-5d4f, controller: true}]
spec: {containers: [{name: server, image: "ghcr.io/example/server:1.0"}]}
status:
  containerStatuses:
  - {name: server, image: "ghcr.io/example/server:1.0", imageID: "ghcr.io/example/server@sha256:` + digest + `", ready: true, restartCount: 0, state: {running: {}}}
`

func applyProfile(t *testing.T, doc string) {
	t.Helper()
	p := &v1alpha1.AIBOMAdapterProfile{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), p))
	ctx := context.Background()
	existing := &v1alpha1.AIBOMAdapterProfile{}
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), existing)
	if apierrors.IsNotFound(err) {
		require.NoError(t, env.Client.Create(ctx, p))
		return
	}
	require.NoError(t, err)
	existing.Spec = p.Spec
	require.NoError(t, env.Client.Update(ctx, existing))
}

func accepted(t *testing.T, name string) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	require.Eventually(t, func() bool {
		p := &v1alpha1.AIBOMAdapterProfile{}
		if env.Client.Get(context.Background(), client.ObjectKey{Name: name}, p) != nil {
			return false
		}
		cond = meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionAccepted)
		return cond != nil && p.Status.ObservedGeneration == p.Generation
	}, eventually, tick, "profile %s never got an Accepted condition", name)
	return cond
}

func waitAIBOM(t *testing.T, key client.ObjectKey, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	var got *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		// Created first, its status written next: an AIBOM without its
		// Ready condition has no status yet.
		if env.Client.Get(context.Background(), key, a) != nil || meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady) == nil {
			return false
		}
		got = a
		return cond == nil || cond(a)
	}, eventually, tick, "AIBOM %s never satisfied the condition", key)
	return got
}

// A profile-defined kind owning a Deployment -> ReplicaSet -> Pod chain
// rolls up like a Go adapter's: one document, the Deployment listed, the
// pod's digest resolved; the Deployment's own AIBOM goes away. Editing the
// profile takes effect without a restart.
func TestProfileKindRollsUpAndEditsTakeEffectWithoutRestart(t *testing.T) {
	ns := env.NewNamespace(t, "p", true)
	env.MustApply(t, ns, widgetChain)
	// No adapter knows Widget yet: it is a generic root, absorbing the
	// Deployment; the Deployment has no AIBOM of its own.
	key := harness.AIBOMKey(ns, widgetGK, "gizmo")
	waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, digest) && strings.Contains(a.Status.Document, `"aibom.root.generic","value":"true"`)
	})
	requireNoAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "gizmo-server"))

	applyProfile(t, widgetProfile("widgets", ""))
	require.Equal(t, metav1.ConditionTrue, accepted(t, "widgets").Status)
	a := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, digest) && len(a.Status.Absorbed) == 1 && !strings.Contains(a.Status.Document, "aibom.root.generic")
	})
	require.Equal(t, "Qwen/Qwen3-8B", a.Status.Summary.Model)
	require.Contains(t, a.Status.Absorbed[0], "gizmo-server")
	require.Contains(t, a.Status.Document, "aibom.rollup.owned.0")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), harness.AIBOMKey(ns, deploymentGK, "gizmo-server"), &v1alpha1.AIBOM{}))
	}, eventually, tick, "the absorbed Deployment's AIBOM must be deleted")

	// An edit: the operator implies a runtime. The document follows.
	applyProfile(t, widgetProfile("widgets", `      runtimes: [{path: spec, value: vllm, reason: widgets run on vLLM}]
`))
	waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return a.Status.Summary.Runtime == "vllm" })
	require.Equal(t, metav1.ConditionTrue, accepted(t, "widgets").Status)

	// Deleting the profile: Widget is no longer tracked, and is a generic
	// root again: its AIBOM reports it (and what it absorbed) as such, and
	// the Deployment is never reported on its own.
	require.NoError(t, env.Client.Delete(context.Background(), &v1alpha1.AIBOMAdapterProfile{ObjectMeta: metav1.ObjectMeta{Name: "widgets"}}))
	waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, digest) && strings.Contains(a.Status.Document, `"aibom.root.generic","value":"true"`)
	})
	requireNoAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "gizmo-server"))
}

// Last good version wins: an edit that does not validate leaves the
// previous version loaded (Accepted=False, Invalid, observedGeneration),
// every AIBOM stays and is still reconciled with the last good version;
// fixing the profile resumes. A profile deleted and re-created within the
// grace period takes its AIBOMs over: none is deleted.
func TestInvalidEditKeepsLastGoodVersionAndEveryAIBOM(t *testing.T) {
	ns := env.NewNamespace(t, "lg", true)
	env.MustApply(t, ns, widgetChain)
	applyProfile(t, widgetProfile("widgets-lg", ""))
	require.Equal(t, metav1.ConditionTrue, accepted(t, "widgets-lg").Status)
	key := harness.AIBOMKey(ns, widgetGK, "gizmo")
	before := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, digest) && len(a.Status.Absorbed) == 1
	})

	applyProfile(t, widgetProfile("widgets-lg", `      runtimes: [{path: "spec..broken", value: vllm, reason: r}]
`))
	c := accepted(t, "widgets-lg")
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, v1alpha1.ReasonProfileInvalid, c.Reason)
	require.Contains(t, c.Message, "stays loaded")
	require.Contains(t, c.Message, "spec.kinds[0].rules.runtimes[0].path")
	p := &v1alpha1.AIBOMAdapterProfile{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: "widgets-lg"}, p))
	require.Equal(t, p.Generation, c.ObservedGeneration)
	require.True(t, controller.Registry.IsTracked(widgetGK), "the last good version must stay registered")

	// Still reconciled with the last good version: a change to the Widget
	// reaches its document.
	ctx := context.Background()
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGK.WithVersion("v1"))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gizmo"}, w))
	require.NoError(t, unstructured.SetNestedField(w.Object, "Qwen/Qwen3-32B", "spec", "model"))
	require.NoError(t, env.Client.Update(ctx, w))
	a := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return a.Status.Summary.Model == "Qwen/Qwen3-32B" })
	require.Equal(t, before.UID, a.UID, "the AIBOM must never be deleted")
	require.Len(t, a.Status.Absorbed, 1)
	require.True(t, apierrors.IsNotFound(env.Client.Get(ctx, harness.AIBOMKey(ns, deploymentGK, "gizmo-server"), &v1alpha1.AIBOM{})),
		"the absorbed Deployment must stay absorbed")

	// Fixing it resumes with the new version.
	applyProfile(t, widgetProfile("widgets-lg", `      runtimes: [{path: spec, value: vllm, reason: widgets run on vLLM}]
`))
	require.Equal(t, metav1.ConditionTrue, accepted(t, "widgets-lg").Status)
	a = waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return a.Status.Summary.Runtime == "vllm" })
	require.Equal(t, before.UID, a.UID)

	// Deleted and re-created within the grace period: the AIBOM is kept.
	require.NoError(t, env.Client.Delete(ctx, &v1alpha1.AIBOMAdapterProfile{ObjectMeta: metav1.ObjectMeta{Name: "widgets-lg"}}))
	require.Eventually(t, func() bool { return !controller.Registry.IsTracked(widgetGK) }, eventually, tick)
	applyProfile(t, widgetProfile("widgets-lg", ""))
	require.Equal(t, metav1.ConditionTrue, accepted(t, "widgets-lg").Status)
	deadline := time.Now().Add(removalGrace + 2*time.Second)
	for time.Now().Before(deadline) {
		got := &v1alpha1.AIBOM{}
		require.NoError(t, env.Client.Get(ctx, key, got), "a re-claimed kind's AIBOM must not be deleted")
		require.Equal(t, before.UID, got.UID)
		time.Sleep(tick)
	}

	// Deleted for good: past the grace the AIBOM is re-verified, and kept,
	// as the generic root the widget now is; the Deployment stays absorbed.
	require.NoError(t, env.Client.Delete(ctx, &v1alpha1.AIBOMAdapterProfile{ObjectMeta: metav1.ObjectMeta{Name: "widgets-lg"}}))
	require.Eventually(t, func() bool { return !controller.Registry.IsTracked(widgetGK) }, eventually, tick)
	deadline = time.Now().Add(removalGrace + 3*time.Second)
	for time.Now().Before(deadline) {
		got := &v1alpha1.AIBOM{}
		require.NoError(t, env.Client.Get(ctx, key, got), "a deleted profile's kind keeps its AIBOM as a generic root")
		require.Equal(t, before.UID, got.UID)
		require.True(t, apierrors.IsNotFound(env.Client.Get(ctx, harness.AIBOMKey(ns, deploymentGK, "gizmo-server"), &v1alpha1.AIBOM{})),
			"the absorbed Deployment must stay absorbed")
		time.Sleep(tick)
	}
	a = waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, `"aibom.root.generic"`) })
	require.Len(t, a.Status.Absorbed, 1)
}

// A broken profile is a condition on it, never a crash, and never affects
// other adapters; a profile claiming a kind another adapter tracks is
// refused.
func TestBrokenAndClaimingProfilesAreRefusedAndChangeNothing(t *testing.T) {
	applyProfile(t, `
apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: broken}
spec:
  version: 0.1.0
  kinds:
  - {group: broken.example.com, kind: Thing, resource: things, versions: [v1], role: tracked, rules: {models: [{path: "spec..model"}]}}
`)
	c := accepted(t, "broken")
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, v1alpha1.ReasonProfileInvalid, c.Reason)
	require.Contains(t, c.Message, "empty field name")

	applyProfile(t, `
apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: claims-deployments}
spec:
  version: 0.1.0
  kinds:
  - {group: apps, kind: Deployment, resource: deployments, versions: [v1], role: tracked}
`)
	c = accepted(t, "claims-deployments")
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, v1alpha1.ReasonProfileClaimed, c.Reason)

	// Deployments are still reported by the apps adapter.
	ns := env.NewNamespace(t, "q", true)
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3"}]}
`)
	a := waitAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "web"), nil)
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	for _, p := range controller.Registry.Adapters() {
		require.NotEqual(t, "claims-deployments", p.Name())
		require.NotEqual(t, "broken", p.Name())
	}
}

// requireNoAIBOM checks that no AIBOM exists under key.
func requireNoAIBOM(t *testing.T, key client.ObjectKey) {
	t.Helper()
	err := env.Client.Get(context.Background(), key, &v1alpha1.AIBOM{})
	require.True(t, apierrors.IsNotFound(err), "unexpected AIBOM %s (err %v)", key, err)
}

// kubectl habits, checked on the API server's discovery: "aibom" is the
// AIBOM's singular name and no category (kubectl expands a category before
// a name, so `kubectl get aibom NAME` would fail and `kubectl get aibom -A`
// would list profiles and configs too); the three kinds share the category
// aibom-all, for whoever asks for all of them.
func TestDiscoveryCategoriesKeepKubectlGetAIBOMToAIBOMs(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	require.NoError(t, err)
	list, err := dc.ServerResourcesForGroupVersion(v1alpha1.GroupVersion.String())
	require.NoError(t, err)
	inAll := map[string]bool{}
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		require.NotContains(t, r.Categories, "aibom", "%s: category aibom hides the AIBOM's singular name", r.Name)
		require.NotContains(t, r.Categories, "all", "%s must not show up in kubectl get all", r.Name)
		require.NotContains(t, r.ShortNames, "aibom", r.Name)
		if slices.Contains(r.Categories, "aibom-all") {
			inAll[r.Name] = true
		}
		if r.Name == "aiboms" {
			require.Equal(t, "aibom", r.SingularName)
		} else {
			require.NotEqual(t, "aibom", r.SingularName, r.Name)
		}
	}
	require.Equal(t, map[string]bool{"aiboms": true, "aibomconfigs": true, "aibomadapterprofiles": true}, inAll)
}
