// Package plugin runs the controller with an out-of-tree adapter loaded from
// a separate binary (examples/ollama) against a real API server.
package plugin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const digest = "5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c"

// The Ollama operator example is built as a binary and loaded by the
// controller: its Model gets one document that absorbs the Deployment the
// operator serves it with; killing the plugin mid-run leaves the controller
// up, the AIBOM kept, and the controller converges again once the plugin is
// restarted.
func TestOutOfTreeOllamaAdapterLoadedFromABinary(t *testing.T) {
	ctx := context.Background()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "aibom-adapter-ollama")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(root, "examples", "ollama")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the example plugin: %s", out)

	env, err := harness.StartEnv()
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{modelCRD()}})
	require.NoError(t, err)

	ollama, err := plugin.Open(bin, plugin.Backoff(100*time.Millisecond, time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = ollama.Close() })
	require.Equal(t, "ollama", ollama.Name())
	ctrl, err := env.StartControllerWith(harness.ControllerOptions{ScrapeRetry: 300 * time.Millisecond}, apps.New(), ollama)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ctrl.Stop() })

	ns := "ollama"
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{graph.OptInLabel: "true"}}}))
	objs, err := manifest.Decode("model", []byte(modelChain))
	require.NoError(t, err)
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	created, err := manifest.Apply(ctx, env.Client, objs)
	require.NoError(t, err)

	modelGK := schema.GroupKind{Group: "ollama.ayaka.io", Kind: "Model"}
	key := client.ObjectKey{Namespace: ns, Name: reconcile.AIBOMName(modelGK, "llama")}
	a := waitAIBOM(t, env, key, func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, "llama3.1") && len(a.Status.Absorbed) == 1 && strings.Contains(a.Status.Document, digest)
	})
	require.Equal(t, []string{"Deployment.apps/ollama-model-llama"}, a.Status.Absorbed)
	// The plugin reports the server container without an image (the
	// operator chooses it): the image and the running digest come from the
	// pod's status, over the plugin's wire protocol.
	require.Contains(t, a.Status.Document, `"name":"docker.io/ollama/ollama","version":"0.6.5"`)
	require.Contains(t, a.Status.Document, `"location":"pods/ollama-model-llama-6d5f-abcde.status.containerStatuses[name=server].image","additionalContext":"pod_status"`)
	require.Equal(t, "ollama", a.Status.Summary.Runtime)
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
	deployKey := client.ObjectKey{Namespace: ns, Name: reconcile.AIBOMName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "ollama-model-llama")}
	require.Error(t, env.Client.Get(ctx, deployKey, &v1alpha1.AIBOM{}), "the Deployment is absorbed, not reported")

	// Kill the plugin process mid-run, then change the Model.
	require.NoError(t, killProcessesOf(bin))
	model := created[0]
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(model), model))
	model.SetAnnotations(map[string]string{"model.aibom.dev/alias": "llama-chat"})
	require.NoError(t, env.Client.Update(ctx, model))

	// The controller restarts the plugin and converges: the new fact is in
	// the document, the AIBOM was never deleted.
	b := waitAIBOM(t, env, key, func(b *v1alpha1.AIBOM) bool {
		ready := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady)
		return strings.Contains(b.Status.Document, "llama-chat") && ready != nil && ready.Status == metav1.ConditionTrue
	})
	require.Equal(t, a.UID, b.UID, "the AIBOM is kept through the plugin's crash")
	require.Positive(t, ollama.Restarts())
}

func waitAIBOM(t *testing.T, env *harness.Env, key client.ObjectKey, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	var got *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		if env.Client.Get(context.Background(), key, a) != nil {
			return false
		}
		got = a
		return cond(a)
	}, 60*time.Second, 100*time.Millisecond, "AIBOM %s", key)
	return got
}

// killProcessesOf sends SIGKILL to every process running the binary.
func killProcessesOf(bin string) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	killed := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == bin {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		return fmt.Errorf("no process runs %s", bin)
	}
	return nil
}

func modelCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "models.ollama.ayaka.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "ollama.ayaka.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Model", ListKind: "ModelList", Plural: "models", Singular: "model"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// The operator serves a Model with a Deployment "ollama-model-<name>" that
// the Model controls, running the Ollama server.
const modelChain = `
apiVersion: ollama.ayaka.io/v1
kind: Model
metadata:
  name: llama
spec:
  image: llama3.1:8b
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ollama-model-llama
  ownerReferences: [{apiVersion: ollama.ayaka.io/v1, kind: Model, name: llama, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: ollama-model-llama}}
  template:
    metadata: {labels: {app: ollama-model-llama}}
    spec: {containers: [{name: server, image: "ollama/ollama:0.6.5"}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: ollama-model-llama-6d5f
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: ollama-model-llama, controller: true}]
spec:
  selector: {matchLabels: {app: ollama-model-llama}}
  template:
    metadata: {labels: {app: ollama-model-llama}}
    spec: {containers: [{name: server, image: "ollama/ollama:0.6.5"}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: ollama-model-llama-6d5f-abcde
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: ollama-model-llama-6d5f, controller: true}]
spec: {containers: [{name: server, image: "ollama/ollama:0.6.5"}]}
status:
  containerStatuses:
    - {name: server, image: "docker.io/ollama/ollama:0.6.5", imageID: "docker.io/ollama/ollama@sha256:` + digest + `", ready: true, restartCount: 0, state: {running: {}}}
`
