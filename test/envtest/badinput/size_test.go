package badinput

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// inlineCap is the harness controller's --max-document-bytes.
const inlineCap = 512 * 1024

var dropped = regexp.MustCompile(`"aibom\.truncation\.applied",\s*"value":\s*"components-dropped:(\d+)"`)

// A Deployment with 1,000 sidecar containers plus a vLLM container with
// 2,000 arguments of 200 bytes (the API server stores it: about 0.5 MB)
// has a document far over the 512 KiB inline cap. Its AIBOM exists and is
// Ready, the document fits the cap, is valid CycloneDX, keeps the runtime
// and the model (the highest-value components) and records the truncation
// in aibom.truncation.applied, and the Truncated condition is True with the
// same count. The bytes are deterministic: the AIBOM deleted and rebuilt by
// the controller holds the same document, and so does an offline build from
// the same object (reconcile.BuildReport).
func TestThousandContainerDeploymentIsTruncatedDeterministically(t *testing.T) {
	ns := newNamespace(t)
	containers := []any{map[string]any{
		"name": "server", "image": vllmImage,
		"args": append([]any{"--model", "meta-llama/Llama-3.1-70B-Instruct"}, longArgs(2000, 200)...),
	}}
	for i := 0; i < 1000; i++ {
		containers = append(containers, map[string]any{
			"name": fmt.Sprintf("sidecar-%04d", i), "image": fmt.Sprintf("registry.example.com/platform/sidecar-%04d:1.%d.0", i, i%7),
		})
	}
	deploy := create(t, ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "wide"},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "wide"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "wide"}},
				"spec":     map[string]any{"containers": containers},
			},
		},
	}})

	truncated := func(a *v1alpha1.AIBOM) bool {
		c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionTruncated)
		return ready(a) && c != nil && c.Status == metav1.ConditionTrue
	}
	a := waitAIBOM(t, ns, deploymentGK, "wide", truncated)
	doc := a.Status.Document
	require.LessOrEqual(t, len(doc), inlineCap)
	require.Equal(t, len(doc), a.Status.DocumentSize)
	require.NoError(t, document.ValidateSchema([]byte(doc)))
	m := dropped.FindStringSubmatch(doc)
	require.NotNil(t, m, "the truncation is recorded in the document")
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.Positive(t, n)
	c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionTruncated)
	require.Equal(t, v1alpha1.ReasonOverInlineCap, c.Reason)
	require.Contains(t, c.Message, fmt.Sprintf("%d lowest-value components dropped", n))
	require.Equal(t, 1001, a.Status.Summary.Images, "the summary describes the workload, not the truncated document")
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	require.Equal(t, "meta-llama/Llama-3.1-70B-Instruct", a.Status.Summary.Model)
	require.Contains(t, doc, `"type":"machine-learning-model"`, "models outrank containers")
	require.Less(t, strings.Count(doc, `"type":"container"`), 1001)

	// Offline, from the same object: the same bytes.
	reg, err := graph.NewRegistry(apps.New())
	require.NoError(t, err)
	entry, ok := reg.Lookup(deploymentGK)
	require.True(t, ok)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(deploy.GroupVersionKind())
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(deploy), live))
	rep := reconcile.BuildReport(context.Background(), entry, live, graph.Descendants{}, harness.ControllerTool, inlineCap)
	require.NoError(t, rep.ScrapeErr)
	require.NoError(t, rep.BuildErr)
	require.Equal(t, doc, rep.Status.Document, "the controller and an offline build agree byte for byte")

	// Deleted, rebuilt by the controller: the same bytes.
	require.NoError(t, env.Client.Delete(context.Background(), a))
	rebuilt := waitAIBOM(t, ns, deploymentGK, "wide", func(b *v1alpha1.AIBOM) bool { return b.UID != a.UID && truncated(b) })
	require.Equal(t, a.Status.DocumentSHA256, rebuilt.Status.DocumentSHA256)
	require.Equal(t, doc, rebuilt.Status.Document)
}

// longArgs returns n arguments of size bytes each.
func longArgs(n, size int) []any {
	out := make([]any, n)
	for i := range out {
		s := fmt.Sprintf("--opt-%d=", i)
		out[i] = s + strings.Repeat("x", size-len(s))
	}
	return out
}
