package envtest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const plainWorkloads = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.27"}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache}
spec:
  selector: {matchLabels: {app: cache}}
  serviceName: cache
  template:
    metadata: {labels: {app: cache}}
    spec: {containers: [{name: redis, image: "redis:7", args: ["--save", ""]}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: copy}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: "busybox:1.36", command: ["sh", "-c", "cp -r /a /b && sleep 1"]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: gpu-app}
spec:
  selector: {matchLabels: {app: gpu-app}}
  template:
    metadata: {labels: {app: gpu-app}}
    spec:
      containers:
      - name: app
        image: "registry.example/acme/inhouse:3"
        resources: {limits: {nvidia.com/gpu: "1"}}
`

// Issue 13: nginx, redis and busybox roots get no AIBOM; a container that
// requests a GPU gets one whatever its image, and its document says why.
func TestRootsWithoutAISignalGetNoAIBOM(t *testing.T) {
	ns := newNamespace(t, true)
	env.MustApply(t, ns, plainWorkloads)
	a := waitAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "gpu-app"), nil)
	require.Contains(t, a.Status.Document, `"accelerator:nvidia.com/gpu"`)
	// The namespace was processed (the sibling has its AIBOM): give the
	// others a moment more, then require that none appeared.
	time.Sleep(2 * time.Second)
	requireNoAIBOMFor(t, harness.AIBOMKey(ns, deploymentGK, "web"))
	requireNoAIBOMFor(t, harness.AIBOMKey(ns, statefulSetGK, "cache"))
	requireNoAIBOMFor(t, harness.AIBOMKey(ns, jobGK, "copy"))
}

// A workload that stops being an AI workload (its model server replaced by
// a web server) loses its AIBOM.
func TestRootThatLosesItsAISignalLosesItsAIBOM(t *testing.T) {
	ns := newNamespace(t, true)
	const vllm = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: svc}
spec:
  selector: {matchLabels: {app: svc}}
  template:
    metadata: {labels: {app: svc}}
    spec: {containers: [{name: main, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "org/m"]}]}
`
	env.MustApply(t, ns, vllm)
	key := harness.AIBOMKey(ns, deploymentGK, "svc")
	waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, `"org/m"`) })
	// The model server is replaced by a web server.
	d := &unstructured.Unstructured{}
	d.SetGroupVersionKind(deploymentGK.WithVersion("v1"))
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "svc"}, d))
	require.NoError(t, unstructured.SetNestedSlice(d.Object, []any{map[string]any{"name": "main", "image": "nginx:1.27"}}, "spec", "template", "spec", "containers"))
	require.NoError(t, env.Client.Update(t.Context(), d))
	waitNoAIBOM(t, key)
	var list v1alpha1.AIBOMList
	require.NoError(t, env.Client.List(t.Context(), &list, client.InNamespace(ns)))
	require.Empty(t, list.Items)
}
