package badinput

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

const (
	nimImageRepo = "nvcr.io/nim/meta/llama-3.1-8b-instruct"
	vllmImage    = "vllm/vllm-openai:v0.6.3"
)

func nimService(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

func nimImage() map[string]any { return map[string]any{"repository": nimImageRepo, "tag": "1.3.3"} }

// nested returns an object nested depth levels deep under key, ending in
// leaf.
func nested(key string, depth int, leaf any) any {
	v := leaf
	for i := 0; i < depth; i++ {
		v = map[string]any{key: v, "junk": []any{int64(i), nil, "x", map[string]any{}}}
	}
	return v
}

// Operator objects the API server stores (the test CRDs keep unknown
// fields, as the real ones do below their schemas) but no operator would
// write: a wrong type where the scraper reads, 5,000 env entries with one
// malformed, a string five levels below where an object is expected inside
// 150 levels of junk, and a Dynamo graph whose components are an object.
// Each gets an AIBOM whose Ready condition is False with reason ScrapeFailed
// and a message naming the field at fault, a Warning Event, and a
// scrape_failed count; none has a document, as nothing could be read. The
// controller keeps running: a healthy Deployment, a NIMService made only of
// nulls and one with 5,000 well-formed env entries in the same namespace get
// correct AIBOMs, so does a workload created afterwards, and a malformed
// object that is fixed recovers.
func TestMalformedOperatorObjectsFailVisiblyAndHarmNoOne(t *testing.T) {
	ns := newNamespace(t)
	failedBefore := outcomes("NIMService.apps.nvidia.com", "scrape_failed") + outcomes("DynamoGraphDeployment.nvidia.com", "scrape_failed")

	manyEnv := func(bad int) []any {
		env := make([]any, 0, 5000)
		for i := 0; i < 5000; i++ {
			e := map[string]any{"name": fmt.Sprintf("VAR_%04d", i), "value": fmt.Sprintf("v%d", i)}
			if i == bad {
				e["value"] = map[string]any{"not": "a string"}
			}
			env = append(env, e)
		}
		return env
	}
	bad := []struct {
		obj     *unstructured.Unstructured
		gk      schema.GroupKind
		locator string
	}{
		{nimService("image-is-a-string", map[string]any{"image": nimImageRepo + ":1.3.3"}), nimGK, "spec.image: expected object, got string"},
		{nimService("env-entry-4321-malformed", map[string]any{"image": nimImage(), "env": manyEnv(4321)}), nimGK, "spec.env[4321]"},
		{nimService("deep-junk", map[string]any{"image": nimImage(), "storage": map[string]any{"pvc": map[string]any{
			"name": map[string]any{"deep": nested("deeper", 150, "bottom")}}}}), nimGK, "spec.storage.pvc.name: expected string, got object"},
		{&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": map[string]any{"name": "components-object"},
			"spec": map[string]any{"components": map[string]any{"decode": map[string]any{"image": int64(42)}}, "extra": nested("x", 100, nil)},
		}}, dgdGK, "spec.components: expected list, got object"},
	}
	for _, b := range bad {
		create(t, ns, b.obj)
	}
	create(t, ns, nimService("all-nulls", map[string]any{"image": nil, "env": nil, "storage": nil, "args": nil, "multiNode": nil, "annotations": nil}))
	create(t, ns, nimService("env-5000-well-formed", map[string]any{"image": nimImage(), "env": manyEnv(-1)}))
	healthyDigest := digestOf("healthy")
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: healthy}
spec:
  selector: {matchLabels: {app: healthy}}
  template:
    metadata: {labels: {app: healthy}}
    spec: {containers: [{name: main, image: "`+vllmImage+`", args: [--model, meta-llama/Llama-3.1-8B-Instruct]}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: healthy-7d9f8
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: healthy, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: healthy, pod-template-hash: 7d9f8}}
  template:
    metadata: {labels: {app: healthy, pod-template-hash: 7d9f8}}
    spec: {containers: [{name: main, image: "`+vllmImage+`"}]}
---`+runningPod("healthy-7d9f8-x1", "{app: healthy, pod-template-hash: 7d9f8}",
		"[{apiVersion: apps/v1, kind: ReplicaSet, name: healthy-7d9f8, controller: true, blockOwnerDeletion: true}]", vllmImage, healthyDigest))

	for _, b := range bad {
		name := b.obj.GetName()
		a := waitAIBOM(t, ns, b.gk, name, scrapeFailed)
		c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
		require.Contains(t, c.Message, b.locator, "%s: the condition names the field at fault", name)
		require.LessOrEqual(t, len(c.Message), 1024)
		require.Empty(t, a.Status.Document, "%s: nothing is fabricated for an object that could not be read", name)
		note := waitEvent(t, ns, b.gk.Kind, name, v1alpha1.ReasonScrapeFailed)
		require.Contains(t, note, b.locator)
	}
	require.GreaterOrEqual(t, outcomes("NIMService.apps.nvidia.com", "scrape_failed")+outcomes("DynamoGraphDeployment.nvidia.com", "scrape_failed"), failedBefore+float64(len(bad)),
		"every failed scrape is counted")

	// The others in the namespace are reported, correctly.
	h := waitAIBOM(t, ns, deploymentGK, "healthy", readyWith(healthyDigest))
	require.NoError(t, document.ValidateSchema([]byte(h.Status.Document)))
	require.Equal(t, "vllm", h.Status.Summary.Runtime)
	require.Equal(t, "meta-llama/Llama-3.1-8B-Instruct", h.Status.Summary.Model)
	require.Empty(t, h.Status.Absorbed, "a ReplicaSet is walk-only: its pod is attributed, nothing is absorbed")
	n := waitAIBOM(t, ns, nimGK, "all-nulls", ready)
	require.NoError(t, document.ValidateSchema([]byte(n.Status.Document)))
	n = waitAIBOM(t, ns, nimGK, "env-5000-well-formed", ready)
	require.NoError(t, document.ValidateSchema([]byte(n.Status.Document)))
	require.Equal(t, "nim", n.Status.Summary.Runtime)
	require.Contains(t, n.Status.Document, nimImageRepo)

	// The controller is alive: a workload created now is reported.
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: later}
spec:
  serviceName: later
  selector: {matchLabels: {app: later}}
  template:
    metadata: {labels: {app: later}}
    spec: {containers: [{name: main, image: "lmsysorg/sglang:v0.4.0"}]}
`)
	l := waitAIBOM(t, ns, statefulSetGK, "later", ready)
	require.Equal(t, "sglang", l.Status.Summary.Runtime)

	// A malformed object that is fixed recovers (the failed scrape is
	// retried, and the update triggers a reconcile anyway).
	fixed := &unstructured.Unstructured{}
	fixed.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps.nvidia.com", Version: "v1alpha1", Kind: "NIMService"})
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "image-is-a-string"}, fixed))
	require.NoError(t, unstructured.SetNestedMap(fixed.Object, nimImage(), "spec", "image"))
	require.NoError(t, env.Client.Update(context.Background(), fixed))
	r := waitAIBOM(t, ns, nimGK, "image-is-a-string", readyWith(nimImageRepo))
	require.NoError(t, document.ValidateSchema([]byte(r.Status.Document)))
}
