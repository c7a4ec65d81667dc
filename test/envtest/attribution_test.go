package envtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// containerProperties returns the properties of the document's container
// component named name (aibom.container.name).
func containerProperties(t *testing.T, doc, name string) (props map[string]string, hash string) {
	t.Helper()
	var d struct {
		Components []struct {
			Type       string                         `json:"type"`
			Hashes     []struct{ Content string }     `json:"hashes"`
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &d))
	for _, c := range d.Components {
		props = map[string]string{}
		named := false
		for _, p := range c.Properties {
			props[p.Name] = p.Value
			if p.Name == "aibom.container.name" && p.Value == name {
				named = true // a component names every container running its image
			}
		}
		if c.Type == "container" && named {
			if len(c.Hashes) > 0 {
				hash = c.Hashes[0].Content
			}
			return props, hash
		}
	}
	t.Fatalf("no container %q in the document", name)
	return nil, ""
}

// A rollout runs two digests: the old ReplicaSet's two pods and the new
// one's pod. The document lists both with their pod counts; the component's
// hash stays the digest most pods run.
func TestRolloutShowsEveryRunningDigestWithItsPodCount(t *testing.T) {
	ns := newNamespace(t, true)
	oldHex, newHex := harness.SHA256Hex("old image"), harness.SHA256Hex("new image")
	const image = "vllm/vllm-openai:v0.6.3"
	env.MustApply(t, ns, harness.DeploymentChain("llama", oldHex)+"---"+
		harness.PodYAML("llama-rs-p1", "apps/v1", "ReplicaSet", "llama-rs", "vllm", image, oldHex)+`---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: llama-rs2
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: llama, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3"}]}
---`+harness.PodYAML("llama-rs2-p0", "apps/v1", "ReplicaSet", "llama-rs2", "vllm", image, newHex))

	a := waitAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "llama"), func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, oldHex) && strings.Contains(a.Status.Document, newHex)
	})
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
	props, hash := containerProperties(t, a.Status.Document, "vllm")
	require.Equal(t, oldHex, hash, "the hash is the digest most pods run")
	require.Equal(t, "2", props["aibom.digest.pods"], "the hash's digest runs on the old ReplicaSet's two pods")
	require.Equal(t, "sha256:"+newHex, props["aibom.digest.other.0"])
	require.Equal(t, "1", props["aibom.digest.other.0.pods"])
}

// Two pods whose controller reference names the Deployment directly (not
// through a ReplicaSet) outvote its one real pod on today's majority rule.
// They must not change its document, and the Deployment gets a Warning
// Event naming them.
func TestRoguePodsControlledByADeploymentDoNotChangeItsDocument(t *testing.T) {
	ns := newNamespace(t, true)
	legitHex, rogueHex := harness.SHA256Hex("legitimate"), harness.SHA256Hex("rogue")
	env.MustApply(t, ns, harness.DeploymentChain("llama", legitHex))
	key := harness.AIBOMKey(ns, deploymentGK, "llama")
	before := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, legitHex) })
	waitQuiet(t)

	const image = "vllm/vllm-openai:v0.6.3"
	env.MustApply(t, ns, harness.PodYAML("rogue-1", "apps/v1", "Deployment", "llama", "vllm", image, rogueHex)+"---"+
		harness.PodYAML("rogue-2", "apps/v1", "Deployment", "llama", "vllm", image, rogueHex))

	var note string
	require.Eventually(t, func() bool {
		list := &eventsv1.EventList{}
		if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "Deployment" && e.Regarding.Name == "llama" && e.Reason == reconcile.ReasonPodsNotAttributed && e.Type == "Warning" {
				note = e.Note
				return true
			}
		}
		return false
	}, eventually, tick, "no %s Warning Event regarding the Deployment", reconcile.ReasonPodsNotAttributed)
	// The recorder folds later Events of the same reason into a series that
	// keeps the first note: it names the pods the first reconcile met.
	require.Regexp(t, `pod rogue-[12] \(controller Deployment\.apps, under Deployment/llama\)`, note)
	waitQuiet(t)

	after := &v1alpha1.AIBOM{}
	require.NoError(t, env.Client.Get(context.Background(), key, after))
	require.Equal(t, before.Status.DocumentSHA256, after.Status.DocumentSHA256, "rogue pods changed the document")
	require.NotContains(t, after.Status.Document, rogueHex)
	require.Positive(t, harness.MetricValue("aibom_pods_unattributed_total", map[string]string{"kind": "Deployment.apps"}))
}
