// Package thirdparty runs the controller the way a third party's adapter
// meets it: an operator that chooses its containers' images itself, and a
// controller started with fewer in-tree adapters than usual.
package thirdparty

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var env *harness.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = harness.StartEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{servedModelCRD()}}); err != nil {
		fmt.Fprintln(os.Stderr, "envtest: install CRD:", err)
		return 1
	}
	return m.Run()
}

// ---- an operator that chooses the image -----------------------------------

const servedGroup = "thirdparty.aibom.dev"

var servedModelGK = schema.GroupKind{Group: servedGroup, Kind: "ServedModel"}

// servedModels is an adapter for an operator shaped like KubeAI's: a
// ServedModel names a model (spec.url) and an engine (spec.engine), and the
// operator runs the engine in a container "server" whose image it picks
// itself. The adapter cannot know the image: it says so with
// ImageFromPods.
type servedModels struct{}

func (servedModels) Name() string { return "servedmodels" }

func (servedModels) Kinds() []adapter.Kind {
	return []adapter.Kind{{Group: servedGroup, Kind: "ServedModel", Resource: "servedmodels", Versions: []string{"v1"},
		Role: adapter.RoleTracked, PodOwners: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}}}
}

func (a servedModels) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if !adapter.Tracks(a.Kinds(), obj.GroupVersionKind()) {
		return adapter.Findings{}, fmt.Errorf("servedmodels: %s is not tracked", obj.GroupVersionKind())
	}
	spec, err := fields.Object(obj.Object, "spec", "")
	if err != nil {
		return adapter.Findings{}, err
	}
	engine, _, err := fields.String(spec, "engine", "spec")
	if err != nil {
		return adapter.Findings{}, err
	}
	url, _, err := fields.String(spec, "url", "spec")
	if err != nil {
		return adapter.Findings{}, err
	}
	atEngine := adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.engine"}
	return adapter.Findings{
		Scrapers:   []adapter.Scraper{{Name: "servedmodels", Version: "0.1.0", Method: "crd-spec"}},
		Containers: []adapter.Container{{Name: "server", ImageFromPods: true, Evidence: atEngine}},
		Runtimes:   []adapter.Runtime{{Name: strings.ToLower(engine), Confidence: adapter.Declared, Evidence: atEngine}},
		Models: []adapter.Model{{Name: strings.TrimPrefix(url, "hf://"), Source: url, Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.url"}}},
	}, nil
}

func servedModelCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "servedmodels." + servedGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: servedGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "ServedModel", ListKind: "ServedModelList", Plural: "servedmodels", Singular: "servedmodel"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// servedChain is a ServedModel with the Deployment and ReplicaSet its
// operator makes; the Deployment names the image the operator chose.
const servedChain = `
apiVersion: thirdparty.aibom.dev/v1
kind: ServedModel
metadata: {name: qwen}
spec: {url: "hf://Qwen/Qwen2.5-0.5B", engine: VLLM}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: model-qwen
  ownerReferences: [{apiVersion: thirdparty.aibom.dev/v1, kind: ServedModel, name: qwen, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {model: qwen}}
  template:
    metadata: {labels: {model: qwen}}
    spec: {containers: [{name: server, image: "vllm/vllm-openai:v0.8.5"}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: model-qwen-7b9c
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: model-qwen, controller: true}]
spec:
  selector: {matchLabels: {model: qwen}}
  template:
    metadata: {labels: {model: qwen}}
    spec: {containers: [{name: server, image: "vllm/vllm-openai:v0.8.5"}]}
`

// The adapter reports a container without an image; the core fills the
// image and the running digest from the status of the pod attributed to
// the ServedModel (ServedModel -> Deployment -> ReplicaSet -> Pod), and the
// document says both were read from pod status. Before the pod runs, the
// container is listed with its image and digest unresolved.
func TestImageChosenByTheOperatorIsReadFromPodStatus(t *testing.T) {
	ctrl, err := env.StartController(apps.New(), servedModels{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ctrl.Stop() })
	ns := env.NewNamespace(t, "tp", true)
	key := harness.AIBOMKey(ns, servedModelGK, "qwen")

	env.MustApply(t, ns, servedChain)
	a := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return len(a.Status.Absorbed) == 1 })
	require.Equal(t, []string{"Deployment.apps/model-qwen"}, a.Status.Absorbed)
	c := containerNamed(t, a.Status.Document, "server")
	require.Equal(t, "server", c.Name, "no pod yet: the container is named, its image unresolved")
	require.Equal(t, "true", c.prop("aibom.image.fromPods"))
	require.Equal(t, "unresolved", c.prop("aibom.confidence"))
	require.Equal(t, "unresolved", c.prop("aibom.digest.confidence"))
	require.Empty(t, c.Hashes)

	digest := harness.SHA256Hex("vllm v0.8.5 as the operator chose it")
	const pod = "model-qwen-7b9c-x2k4p"
	env.MustApply(t, ns, harness.PodYAML(pod, "apps/v1", "ReplicaSet", "model-qwen-7b9c", "server", "vllm/vllm-openai:v0.8.5", digest))
	a = waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, digest) })
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
	c = containerNamed(t, a.Status.Document, "server")
	require.Equal(t, "docker.io/vllm/vllm-openai", c.Name)
	require.Equal(t, "v0.8.5", c.Version)
	require.Equal(t, []hash{{Alg: "SHA-256", Content: digest}}, c.Hashes)
	require.Equal(t, "declared", c.prop("aibom.confidence"))
	require.Equal(t, "true", c.prop("aibom.image.fromPods"))
	require.Equal(t, "pod_status", c.prop("aibom.digest.source"))
	require.Equal(t, "pods/"+pod+".status.containerStatuses[name=server].imageID", c.prop("aibom.digest.locator"))
	require.Contains(t, c.occurrences(), "pods/"+pod+".status.containerStatuses[name=server].image=pod_status")
	require.Contains(t, c.occurrences(), "spec.engine=crd_field")
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	require.Equal(t, "Qwen/Qwen2.5-0.5B", a.Status.Summary.Model)
}

// ---- Pod belongs to the core ----------------------------------------------

// With only the batch adapter enabled (no apps adapter, which used to
// declare Pod), the controller still watches pods and resolves a Job's
// running digest from its pod.
func TestBatchAloneStillResolvesPodDigests(t *testing.T) {
	ctrl, err := env.StartController(batch.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = ctrl.Stop() })
	_, ok := ctrl.Registry.Lookup(graph.PodGroupKind)
	require.True(t, ok, "Pod is registered without the apps adapter")
	ns := env.NewNamespace(t, "tp", true)

	digest := harness.SHA256Hex("eval job image")
	env.MustApply(t, ns, `
apiVersion: batch/v1
kind: Job
metadata: {name: eval}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
---`+harness.PodYAML("eval-abcde", "batch/v1", "Job", "eval", "eval", "vllm/vllm-openai:v0.6.3", digest))
	a := waitAIBOM(t, harness.AIBOMKey(ns, schema.GroupKind{Group: "batch", Kind: "Job"}, "eval"),
		func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, digest) })
	c := containerNamed(t, a.Status.Document, "eval")
	require.Equal(t, "pod_status", c.prop("aibom.digest.source"))
	require.Equal(t, "pods/eval-abcde.status.containerStatuses[name=eval].imageID", c.prop("aibom.digest.locator"))
}

// ---- helpers --------------------------------------------------------------

func waitAIBOM(t *testing.T, key client.ObjectKey, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	var got *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		if env.Client.Get(context.Background(), key, a) != nil {
			return false
		}
		ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue {
			return false
		}
		got = a
		return cond(a)
	}, 60*time.Second, 100*time.Millisecond, "AIBOM %s never satisfied the condition", key)
	return got
}

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type component struct {
	Type       string                         `json:"type"`
	Name       string                         `json:"name"`
	Version    string                         `json:"version"`
	Hashes     []hash                         `json:"hashes"`
	Properties []struct{ Name, Value string } `json:"properties"`
	Evidence   struct {
		Occurrences []struct {
			Location          string `json:"location"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"occurrences"`
	} `json:"evidence"`
}

func (c component) prop(name string) string {
	for _, p := range c.Properties {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// occurrences lists the evidence occurrences as "location=context".
func (c component) occurrences() []string {
	var out []string
	for _, o := range c.Evidence.Occurrences {
		out = append(out, o.Location+"="+o.AdditionalContext)
	}
	return out
}

// containerNamed returns the container component running the container
// name (aibom.container.name).
func containerNamed(t *testing.T, doc, name string) component {
	t.Helper()
	var d struct {
		Components []component `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &d))
	for _, c := range d.Components {
		if c.Type == "container" && c.prop("aibom.container.name") == name {
			return c
		}
	}
	t.Fatalf("no container %q in the document:\n%s", name, doc)
	return component{}
}
