// Package generic checks pod-level conservation against a real API server:
// every AI pod in an opted-in namespace is in exactly one AIBOM, whoever
// created it. An operator no adapter declares (here a "ServingGroup" whose
// controller creates Pods directly, as serving groups, eval jobs and MPI
// launchers do) gets one AIBOM for its custom resource; a Pod nothing
// controls is its own root; an owner with no AI signal of its own still
// reports the AI workload it absorbed.
package generic

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
)

const (
	eventually = 30 * time.Second
	tick       = 100 * time.Millisecond
	digestA    = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB    = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

var (
	servingGroupGK = schema.GroupKind{Group: "serving.example.com", Kind: "ServingGroup"}
	podGK          = schema.GroupKind{Kind: "Pod"}
	deploymentGK   = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK  = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	env, err = harness.StartEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{servingGroupCRD()}}); err != nil {
		fmt.Fprintln(os.Stderr, "envtest: install CRD:", err)
		return 1
	}
	// Only the apps and batch adapters: no adapter declares ServingGroup.
	controller, err = env.StartController(apps.New(), batch.New())
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest: start controller:", err)
		return 1
	}
	defer controller.Stop()
	return m.Run()
}

func servingGroupCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "servinggroups.serving.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "serving.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "ServingGroup", ListKind: "ServingGroupList", Plural: "servinggroups", Singular: "servinggroup"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
}

// servingGroup is a custom resource whose spec embeds the leader and worker
// pod templates, and the two pods its operator created from them, each with
// a controller ownerReference to the group (the harness fills in the UID).
const servingGroup = `
apiVersion: serving.example.com/v1alpha1
kind: ServingGroup
metadata: {name: deepseek}
spec:
  replicas: 1
  entryTemplate:
    spec:
      containers:
      - name: leader
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "--tensor-parallel-size", "2"]
  workerTemplate:
    spec:
      containers:
      - name: worker
        image: vllm/vllm-openai:v0.8.5
        command: ["ray", "start", "--block"]
---
apiVersion: v1
kind: Pod
metadata:
  name: deepseek-0
  ownerReferences: [{apiVersion: serving.example.com/v1alpha1, kind: ServingGroup, name: deepseek, controller: true}]
spec:
  containers:
  - name: leader
    image: vllm/vllm-openai:v0.8.5
    args: ["--model", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "--tensor-parallel-size", "2"]
status:
  containerStatuses:
  - {name: leader, image: docker.io/vllm/vllm-openai:v0.8.5, imageID: "docker.io/vllm/vllm-openai@sha256:` + digestA + `", ready: true, restartCount: 0, state: {running: {}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: deepseek-0-1
  ownerReferences: [{apiVersion: serving.example.com/v1alpha1, kind: ServingGroup, name: deepseek, controller: true}]
spec:
  containers:
  - name: worker
    image: vllm/vllm-openai:v0.8.5
    command: ["ray", "start", "--block"]
status:
  containerStatuses:
  - {name: worker, image: docker.io/vllm/vllm-openai:v0.8.5, imageID: "docker.io/vllm/vllm-openai@sha256:` + digestA + `", ready: true, restartCount: 0, state: {running: {}}}
`

// TestOperatorNoAdapterDeclaresGetsOneAIBOMForItsCustomResource: the
// operator's custom resource is the generic root. Its spec is read (the
// controller may read it here), its pods give the running digest, no pod gets
// an AIBOM of its own, and deleting the custom resource removes its AIBOM.
func TestOperatorNoAdapterDeclaresGetsOneAIBOMForItsCustomResource(t *testing.T) {
	ns := env.NewNamespace(t, "g", true)
	objs := env.MustApply(t, ns, servingGroup)
	key := harness.AIBOMKey(ns, servingGroupGK, "deepseek")
	a := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, digestA) && strings.Contains(a.Status.Document, `"aibom.root.read","value":"true"`)
	})
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	require.Equal(t, "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", a.Status.Summary.Model)
	require.Equal(t, "ServingGroup", a.Spec.Subject.Kind)
	require.Equal(t, string(objs[0].GetUID()), a.Spec.Subject.UID)
	require.Contains(t, a.Status.Document, "spec.entryTemplate.spec.containers[0]", "the evidence is the custom resource's own field")
	require.Contains(t, a.Status.Document, `"aibom.root.generic","value":"true"`)
	require.Contains(t, a.Status.Document, "generic-root(ServingGroup.serving.example.com)")
	requireOnlyAIBOMs(t, ns, key)

	require.NoError(t, env.Client.Delete(context.Background(), objs[0]))
	waitNoAIBOM(t, key)
}

// TestBarePodIsItsOwnRoot: a Pod nothing controls (kubectl run, a notebook's
// ad-hoc server) running SGLang gets its own AIBOM with its digest.
func TestBarePodIsItsOwnRoot(t *testing.T) {
	ns := env.NewNamespace(t, "g", true)
	objs := env.MustApply(t, ns, `
apiVersion: v1
kind: Pod
metadata: {name: sglang-adhoc}
spec:
  containers:
  - name: server
    image: lmsysorg/sglang:v0.4.6
    command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"]
status:
  containerStatuses:
  - {name: server, image: docker.io/lmsysorg/sglang:v0.4.6, imageID: "docker.io/lmsysorg/sglang@sha256:`+digestB+`", ready: true, restartCount: 0, state: {running: {}}}
---
apiVersion: v1
kind: Pod
metadata: {name: plain-nginx}
spec: {containers: [{name: web, image: nginx:1.27}]}
`)
	key := harness.AIBOMKey(ns, podGK, "sglang-adhoc")
	a := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, digestB) })
	require.Equal(t, "sglang", a.Status.Summary.Runtime)
	require.Equal(t, "Qwen/Qwen2.5-7B-Instruct", a.Status.Summary.Model)
	require.Equal(t, string(objs[0].GetUID()), a.Spec.Subject.UID)
	requireOnlyAIBOMs(t, ns, key) // no AIBOM for a pod with no AI signal

	require.NoError(t, env.Client.Delete(context.Background(), objs[0]))
	waitNoAIBOM(t, key)
}

// TestGenericRootsFollowTheirSpecs: a generic root's spec is what its
// document reads, so a change to it is reconciled at once (not at the next
// re-verification): the unknown custom resource's model, and the image and
// the annotations of a bare pod.
func TestGenericRootsFollowTheirSpecs(t *testing.T) {
	ns := env.NewNamespace(t, "g", true)
	objs := env.MustApply(t, ns, servingGroup+`
---
apiVersion: v1
kind: Pod
metadata: {name: sglang-adhoc}
spec:
  containers:
  - name: server
    image: lmsysorg/sglang:v0.4.6
    command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"]
`)
	groupKey := harness.AIBOMKey(ns, servingGroupGK, "deepseek")
	podKey := harness.AIBOMKey(ns, podGK, "sglang-adhoc")
	waitAIBOM(t, groupKey, func(a *v1alpha1.AIBOM) bool {
		return a.Status.Summary.Model == "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"
	})
	waitAIBOM(t, podKey, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, `"v0.4.6"`) })

	group := objs[0]
	require.Equal(t, "ServingGroup", group.GetKind())
	patch := []byte(`{"spec":{"entryTemplate":{"spec":{"containers":[{"name":"leader","image":"vllm/vllm-openai:v0.8.5","args":["--model","Qwen/Qwen3-8B"]}]}}}}`)
	require.NoError(t, env.Client.Patch(context.Background(), group, client.RawPatch(types.MergePatchType, patch)))
	waitAIBOM(t, groupKey, func(a *v1alpha1.AIBOM) bool { return a.Status.Summary.Model == "Qwen/Qwen3-8B" })

	var pod client.Object
	for _, o := range objs {
		if o.GetKind() == "Pod" && o.GetName() == "sglang-adhoc" {
			pod = o
		}
	}
	require.NotNil(t, pod)
	patch = []byte(`{"spec":{"containers":[{"name":"server","image":"lmsysorg/sglang:v0.4.7"}]}}`)
	require.NoError(t, env.Client.Patch(context.Background(), pod, client.RawPatch(types.StrategicMergePatchType, patch)))
	waitAIBOM(t, podKey, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, `"v0.4.7"`) })

	// A bare pod's annotations are read too: a model annotation added later
	// names the adapter it serves.
	patch = []byte(`{"metadata":{"annotations":{"model.aibom.dev/adapter":"acme/support-lora"}}}`)
	require.NoError(t, env.Client.Patch(context.Background(), pod, client.RawPatch(types.MergePatchType, patch)))
	waitAIBOM(t, podKey, func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, "acme/support-lora") && strings.Contains(a.Status.Document, "metadata.annotations[model.aibom.dev/adapter]")
	})
}

// TestUnknownCustomResourceAbsorbsTheDeploymentItOwns: a Deployment (with its
// ReplicaSet and Pod) controlled by a custom resource no adapter declares is
// absorbed and listed by the custom resource's AIBOM, with the pod's digest.
func TestUnknownCustomResourceAbsorbsTheDeploymentItOwns(t *testing.T) {
	ns := env.NewNamespace(t, "g", true)
	env.MustApply(t, ns, `
apiVersion: serving.example.com/v1alpha1
kind: ServingGroup
metadata: {name: wrapper}
spec: {replicas: 1}
`+deploymentUnder("wrapper", "llama", "vllm", "vllm/vllm-openai:v0.6.3", "docker.io/vllm/vllm-openai", digestA, `"--model", "meta-llama/Llama-3.1-8B-Instruct"`))
	key := harness.AIBOMKey(ns, servingGroupGK, "wrapper")
	a := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, digestA) })
	require.Equal(t, []string{"Deployment.apps/llama"}, a.Status.Absorbed)
	require.Equal(t, "vllm", a.Status.Summary.Runtime, "the whole roll-up's signal: the wrapper has none of its own")
	require.Equal(t, "meta-llama/Llama-3.1-8B-Instruct", a.Status.Summary.Model)
	requireOnlyAIBOMs(t, ns, key)
}

// TestOwnerThatNamesOnlyItsModelListsTheImagesThatRunUnderIt: an unknown
// owner whose spec names its model but no container (an operator that takes
// a model and an engine and creates the Deployment itself) has an AI signal
// of its own, and its document still names the image that runs below it,
// with the running digest and the field it was read from.
func TestOwnerThatNamesOnlyItsModelListsTheImagesThatRunUnderIt(t *testing.T) {
	ns := env.NewNamespace(t, "g", true)
	env.MustApply(t, ns, `
apiVersion: serving.example.com/v1alpha1
kind: ServingGroup
metadata: {name: qwen}
spec: {modelName: Qwen/Qwen2.5-7B-Instruct, engine: vllm}
`+deploymentUnder("qwen", "qwen", "vllm", "vllm/vllm-openai:v0.6.3", "docker.io/vllm/vllm-openai", digestA, `"--model", "Qwen/Qwen2.5-7B-Instruct"`))
	key := harness.AIBOMKey(ns, servingGroupGK, "qwen")
	a := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, digestA) })
	require.Equal(t, []string{"Deployment.apps/qwen"}, a.Status.Absorbed)
	require.Equal(t, "Qwen/Qwen2.5-7B-Instruct", a.Status.Summary.Model)
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	require.Contains(t, a.Status.Document, "Deployment/qwen:spec.template.spec.containers[0]")

	// The same when what runs below carries no signal of its own (an image
	// no scraper knows): the owner's model is the signal, and the document
	// still names the image and its digest.
	env.MustApply(t, ns, `
apiVersion: serving.example.com/v1alpha1
kind: ServingGroup
metadata: {name: inhouse}
spec: {modelName: acme/support-7b}
`+deploymentUnder("inhouse", "inhouse", "server", "registry.example.com/acme/server:1.0", "registry.example.com/acme/server", digestB, ""))
	inhouse := harness.AIBOMKey(ns, servingGroupGK, "inhouse")
	b := waitAIBOM(t, inhouse, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, digestB) })
	require.Equal(t, "acme/support-7b", b.Status.Summary.Model)
	require.Contains(t, b.Status.Document, "Deployment/inhouse:spec.template.spec.containers[0]")
	requireOnlyAIBOMs(t, ns, key, inhouse)
}

// TestPodsOfAnUnreadableOwnerAreGroupedUnderOneAIBOM: the owner's kind is not
// served (no CRD; an owner the controller may not read behaves the same), so
// nothing can be read of it. The pods naming it by the same controller
// reference are still grouped under one AIBOM for it, as the references name
// it, never one per pod; a metric counts the unread owner.
func TestPodsOfAnUnreadableOwnerAreGroupedUnderOneAIBOM(t *testing.T) {
	ns := env.NewNamespace(t, "g", true)
	pod := func(name string) string {
		return `
apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
  ownerReferences: [{apiVersion: eval.example.org/v2, kind: EvalRun, name: mmlu, uid: 7d3f5a2e-0c4b-4e8a-9f1d-2b6c8e0a4d13, controller: true}]
spec:
  containers:
  - name: harness
    image: ghcr.io/example/lm-eval:0.4.8
    command: ["lm_eval", "--model", "vllm", "--model_args", "pretrained=mistralai/Mistral-7B-Instruct-v0.3", "--tasks", "mmlu"]
status:
  containerStatuses:
  - {name: harness, image: ghcr.io/example/lm-eval:0.4.8, imageID: "ghcr.io/example/lm-eval@sha256:` + digestB + `", ready: true, restartCount: 0, state: {running: {}}}
`
	}
	env.MustApply(t, ns, pod("mmlu-shard-0")+"---"+pod("mmlu-shard-1"))
	evalGK := schema.GroupKind{Group: "eval.example.org", Kind: "EvalRun"}
	key := harness.AIBOMKey(ns, evalGK, "mmlu")
	a := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, digestB) })
	require.Equal(t, "7d3f5a2e-0c4b-4e8a-9f1d-2b6c8e0a4d13", a.Spec.Subject.UID)
	require.Equal(t, "eval.example.org/v2", a.Spec.Subject.APIVersion)
	require.Contains(t, a.Status.Document, `"aibom.root.read","value":"false"`)
	require.Contains(t, a.Status.Document, "Pod/mmlu-shard-0:spec.containers[0]")
	requireOnlyAIBOMs(t, ns, key)
	require.Positive(t, counter(t, "aibom_generic_owner_unread_total", "EvalRun.eval.example.org"))
}

// TestOwnerWithoutAISignalReportsTheAIWorkloadItAbsorbs: a tracked owner with
// no AI signal of its own (a coordinator StatefulSet running busybox) that
// controls a vLLM Deployment gets an AIBOM listing the child, with the child's
// runtime: the child, absorbed, has none of its own.
func TestOwnerWithoutAISignalReportsTheAIWorkloadItAbsorbs(t *testing.T) {
	ns := env.NewNamespace(t, "g", true)
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: coordinator}
spec:
  serviceName: coordinator
  selector: {matchLabels: {app: coordinator}}
  template:
    metadata: {labels: {app: coordinator}}
    spec: {containers: [{name: main, image: busybox:1.36, command: [sleep, infinity]}]}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: coordinator, controller: true}]
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec: {containers: [{name: vllm, image: vllm/vllm-openai:v0.6.3, args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]}]}
`)
	key := harness.AIBOMKey(ns, statefulSetGK, "coordinator")
	a := waitAIBOM(t, key, nil)
	require.Equal(t, []string{"Deployment.apps/llama"}, a.Status.Absorbed)
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	require.Contains(t, a.Status.Document, "Deployment/llama:spec.template.spec.containers[0]")
	requireOnlyAIBOMs(t, ns, key)
	requireNoAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "llama"))
}

// deploymentUnder is a Deployment controlled by the ServingGroup owner, with
// its ReplicaSet and one pod running image (repository repo) at digest; args,
// when not empty, are the Deployment's container arguments (YAML list items).
func deploymentUnder(owner, name, container, image, repo, digest, args string) string {
	deployArgs := ""
	if args != "" {
		deployArgs = ", args: [" + args + "]"
	}
	statusImage := image
	if strings.HasPrefix(repo, "docker.io/") {
		statusImage = "docker.io/" + image
	}
	return fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  ownerReferences: [{apiVersion: serving.example.com/v1alpha1, kind: ServingGroup, name: %[1]s, controller: true}]
spec:
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: %[3]s, image: %[4]s%[7]s}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: %[2]s-5d4c
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s, controller: true}]
spec:
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: %[3]s, image: %[4]s}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: %[2]s-5d4c-x1
  labels: {app: %[2]s}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: %[2]s-5d4c, controller: true}]
spec: {containers: [{name: %[3]s, image: %[4]s}]}
status:
  containerStatuses:
  - {name: %[3]s, image: %[8]s, imageID: "%[5]s@sha256:%[6]s", ready: true, restartCount: 0, state: {running: {}}}
`, owner, name, container, image, repo, digest, deployArgs, statusImage)
}

func waitAIBOM(t *testing.T, key client.ObjectKey, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	var got *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		if err := env.Client.Get(context.Background(), key, a); err != nil {
			return false
		}
		if meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady) == nil {
			return false
		}
		got = a
		return cond == nil || cond(a)
	}, eventually, tick, "AIBOM %s never satisfied the condition", key)
	return got
}

func waitNoAIBOM(t *testing.T, key client.ObjectKey) {
	t.Helper()
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), key, &v1alpha1.AIBOM{}))
	}, eventually, tick, "AIBOM %s still exists", key)
}

func requireNoAIBOM(t *testing.T, key client.ObjectKey) {
	t.Helper()
	err := env.Client.Get(context.Background(), key, &v1alpha1.AIBOM{})
	require.True(t, apierrors.IsNotFound(err), "unexpected AIBOM %s (err %v)", key, err)
}

// requireOnlyAIBOMs checks that the namespace holds exactly the given AIBOMs
// (after the controller settled on the first one).
func requireOnlyAIBOMs(t *testing.T, ns string, keys ...client.ObjectKey) {
	t.Helper()
	want := map[string]bool{}
	for _, k := range keys {
		want[k.Name] = true
	}
	require.Eventually(t, func() bool {
		var list v1alpha1.AIBOMList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return false
		}
		got := map[string]bool{}
		for _, a := range list.Items {
			got[a.Name] = true
		}
		return fmt.Sprint(got) == fmt.Sprint(want)
	}, eventually, tick, "namespace %s holds other AIBOMs than %v", ns, keys)
}

// counter reads a counter of the controller's metrics registry for a kind.
func counter(t *testing.T, name, kind string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
