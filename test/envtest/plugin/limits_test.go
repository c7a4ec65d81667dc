package plugin

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// A plugin that answers one workload with more than the response cap fails
// that workload's scrape only: its AIBOM says Ready=False naming the plugin
// and the cap, while another object of the same plugin and an in-tree kind
// get their documents and the manager keeps running.
func TestPluginResponseOverTheCapFailsOneWorkloadOnly(t *testing.T) {
	ctx := context.Background()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "flaky")
	build := exec.Command("go", "build", "-o", bin, "./pkg/adapter/plugin/testdata/flaky")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the test plugin: %s", out)

	env, err := harness.StartEnv()
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}})
	require.NoError(t, err)

	flaky, err := plugin.Open(bin, plugin.MaxResponseBytes(1<<20))
	require.NoError(t, err)
	t.Cleanup(func() { _ = flaky.Close() })
	ctrl, err := env.StartControllerWith(harness.ControllerOptions{}, apps.New(), flaky)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ctrl.Stop() })

	ns := "widgets"
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{graph.OptInLabel: "true"}}}))
	objs, err := manifest.Decode("widgets", []byte(widgets))
	require.NoError(t, err)
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	_, err = manifest.Apply(ctx, env.Client, objs)
	require.NoError(t, err)

	widgetGK := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	ready := func(a *v1alpha1.AIBOM) *metav1.Condition {
		return meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	}
	huge := waitAIBOM(t, env, client.ObjectKey{Namespace: ns, Name: reconcile.AIBOMName(widgetGK, "huge")}, func(a *v1alpha1.AIBOM) bool {
		return ready(a) != nil && ready(a).Status == metav1.ConditionFalse
	})
	require.Equal(t, v1alpha1.ReasonScrapeFailed, ready(huge).Reason)
	require.Contains(t, ready(huge).Message, `adapter plugin "flaky"`)
	require.Contains(t, ready(huge).Message, "over the response cap of 1 MiB")

	ok := waitAIBOM(t, env, client.ObjectKey{Namespace: ns, Name: reconcile.AIBOMName(widgetGK, "ok")}, func(a *v1alpha1.AIBOM) bool {
		return ready(a) != nil && ready(a).Status == metav1.ConditionTrue
	})
	require.True(t, strings.Contains(ok.Status.Document, "Qwen/Qwen2.5-0.5B"))
	deploy := waitAIBOM(t, env, client.ObjectKey{Namespace: ns, Name: reconcile.AIBOMName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "server")}, func(a *v1alpha1.AIBOM) bool {
		return ready(a) != nil && ready(a).Status == metav1.ConditionTrue
	})
	require.Contains(t, deploy.Status.Document, "vllm")

	select {
	case <-ctrl.Exited():
		t.Fatal("the manager exited")
	default:
	}
	require.Zero(t, flaky.Restarts(), "a plugin that answered too much is alive, not restarted")
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
}

// testdata/flaky pads its response to spec.responseBytes: 8 MiB, over the
// 1 MiB cap the test sets.
const widgets = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: huge}
spec: {image: "example.com/widget:1.0", model: Qwen/Qwen2.5-0.5B, responseBytes: 8388608}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: ok}
spec: {image: "example.com/widget:1.0", model: Qwen/Qwen2.5-0.5B}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3"}]}
`
