package sinks

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var deploymentGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}

const jobYAML = `
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: t, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
`

func labelledNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	ns := env.NewNamespace(t, "cfg", false)
	n := &corev1.Namespace{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, n))
	n.Labels = labels
	require.NoError(t, env.Client.Update(context.Background(), n))
	return ns
}

func TestConfigChangeRescopesNamespacesWithoutRestart(t *testing.T) {
	startController(t, fastDelivery())
	optedIn := env.NewNamespace(t, "cfg", true)
	team := labelledNamespace(t, map[string]string{"team": "ml"})
	env.MustApply(t, optedIn, harness.DeploymentChain("vllm", harness.SHA256Hex("a")))
	env.MustApply(t, team, harness.DeploymentChain("vllm", harness.SHA256Hex("b")))
	inOptedIn, inTeam := harness.AIBOMKey(optedIn, deploymentGK, "vllm"), harness.AIBOMKey(team, deploymentGK, "vllm")

	// No AIBOMConfig: the flags (aibom.dev/enabled=true).
	require.Eventually(t, func() bool { _, ok := getAIBOM(inOptedIn); return ok }, eventually, tick)
	_, ok := getAIBOM(inTeam)
	require.False(t, ok)

	// The selector changes: the team namespace enters, the opted-in one
	// leaves, without a restart.
	applyConfig(t, v1alpha1.AIBOMConfigSpec{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "ml"}}})
	cfg := waitConfig(t, func(c *v1alpha1.AIBOMConfig) bool { return meta.IsStatusConditionTrue(c.Status.Conditions, "Ready") })
	require.Equal(t, cfg.Generation, cfg.Status.AppliedGeneration)
	require.Eventually(t, func() bool {
		_, in := getAIBOM(inTeam)
		_, out := getAIBOM(inOptedIn)
		return in && !out
	}, eventually, tick)

	// An invalid change (an operator the API server's schema cannot refuse)
	// is reported and the last good configuration keeps running.
	applied := cfg.Status.AppliedGeneration
	applyConfig(t, v1alpha1.AIBOMConfigSpec{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near", Values: []string{"ml"}}}}})
	cfg = waitConfig(t, func(c *v1alpha1.AIBOMConfig) bool { return meta.IsStatusConditionFalse(c.Status.Conditions, "Ready") })
	ready := meta.FindStatusCondition(cfg.Status.Conditions, "Ready")
	require.Equal(t, v1alpha1.ConfigReasonInvalid, ready.Reason)
	require.Contains(t, ready.Message, "namespaceSelector")
	require.Equal(t, applied, cfg.Status.AppliedGeneration)
	late := labelledNamespace(t, map[string]string{"team": "ml"})
	env.MustApply(t, late, harness.DeploymentChain("vllm", harness.SHA256Hex("c")))
	require.Eventually(t, func() bool { _, ok := getAIBOM(harness.AIBOMKey(late, deploymentGK, "vllm")); return ok }, eventually, tick,
		"the last good selector still runs")
	_, ok = getAIBOM(inTeam)
	require.True(t, ok)

	// An adapter the controller did not load is refused too.
	applyConfig(t, v1alpha1.AIBOMConfigSpec{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "ml"}}, Adapters: []string{"nosuch"}})
	cfg = waitConfig(t, func(c *v1alpha1.AIBOMConfig) bool { return meta.IsStatusConditionFalse(c.Status.Conditions, "Ready") })
	require.Contains(t, meta.FindStatusCondition(cfg.Status.Conditions, "Ready").Message, `adapter "nosuch" is not loaded`)

	// Disabling an adapter deletes exactly its kinds' AIBOMs.
	env.MustApply(t, team, jobYAML)
	jobKey := harness.AIBOMKey(team, schema.GroupKind{Group: "batch", Kind: "Job"}, "train")
	require.Eventually(t, func() bool { _, ok := getAIBOM(jobKey); return ok }, eventually, tick)
	applyConfig(t, v1alpha1.AIBOMConfigSpec{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "ml"}}, Adapters: []string{"batch"}})
	waitConfig(t, func(c *v1alpha1.AIBOMConfig) bool { return meta.IsStatusConditionTrue(c.Status.Conditions, "Ready") })
	require.Eventually(t, func() bool {
		_, dep := getAIBOM(inTeam)
		_, job := getAIBOM(jobKey)
		return !dep && job
	}, eventually, tick)

	// The CRD's own validation refuses what it can: a sink with two types,
	// another name than default.
	bad := &v1alpha1.AIBOMConfig{ObjectMeta: metav1.ObjectMeta{Name: "other"}}
	require.Error(t, env.Client.Create(context.Background(), bad))
	cur := &v1alpha1.AIBOMConfig{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: v1alpha1.ConfigName}, cur))
	cur.Spec.Sinks = []v1alpha1.Sink{{Name: "two", Webhook: &v1alpha1.WebhookSink{URL: "https://x"}, OCI: &v1alpha1.OCISink{}}}
	require.ErrorContains(t, env.Client.Update(context.Background(), cur), "exactly one of")
	cur.Spec.Sinks = []v1alpha1.Sink{{Name: "plain", Webhook: &v1alpha1.WebhookSink{URL: "http://x"}}}
	require.ErrorContains(t, env.Client.Update(context.Background(), cur), "https://")

	// Without the object, the flags again.
	require.NoError(t, env.Client.Delete(context.Background(), cur))
	require.Eventually(t, func() bool {
		_, dep := getAIBOM(inOptedIn)
		_, gone := getAIBOM(inTeam)
		return dep && !gone
	}, eventually, tick)
}
