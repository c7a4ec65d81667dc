package badinput

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

// fakeSecrets are credentials in the shapes of real ones, assembled at run
// time so that the repository holds no literal a scanner would flag; none is
// a real credential. For URLs, the value is the URL and the secret the
// credential inside it.
func fakeSecrets() []struct{ value, secret string } {
	jwt := "eyJ" + "hbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiJ0ZW5hbnQtYmFkaW5wdXQifQ" + "." + "c2lnbmF0dXJlLW9ubHktZm9yLXRlc3Rz"
	return []struct{ value, secret string }{
		{"ghp_" + "B4dInputT3stT0k3nNotR3alAbCdEf012", ""},
		{"hf_" + "BadInputFakeTokenAbCdEfGhIjKlMnOp", ""},
		{"sk-proj-" + "BadInput_fake-Key0123456789abcdefGHIJKL", ""},
		{"xoxb-" + "210987654321-2109876543210-" + "BadInputFakeSlack", ""},
		{"nvapi-" + "BadInputFakeNgcKey_0123456789-abcdefGHIJ", ""},
		{"AKIA" + "BADINPUT7FAKE123", ""},
		{jwt, ""},
		{"https://svc:" + "BadInputPassw0rd99" + "@weights.example.com/org/model", "BadInputPassw0rd99"},
		{"https://weights.example.com/m.bin?X-Amz-Signature=" + "badinput0123456789abcdef" + "&x=1", "badinput0123456789abcdef"},
	}
}

// Secrets in real token shapes, written into the fields every in-tree
// adapter reads (a Deployment's pod template, a NIMService's env, args and
// annotations, a Dynamo graph's modelRef, graph env and component pod
// template) and into secret-named env vars, never reach an AIBOM: not the
// document, not the status. Each document records its redactions.
func TestSecretsNeverReachAnAIBOM(t *testing.T) {
	ns := newNamespace(t)
	type workload struct {
		gk  schema.GroupKind
		obj *unstructured.Unstructured
	}
	var workloads []workload
	var secrets []string
	for i, s := range fakeSecrets() {
		secret := s.secret
		if secret == "" {
			secret = s.value
		}
		secrets = append(secrets, secret)
		v := s.value
		container := func(name, image string) map[string]any {
			return map[string]any{
				"name": name, "image": image,
				"args": []any{"--model", v, "--api-key", v, "--header", "Authorization: Bearer " + v},
				"env": []any{
					map[string]any{"name": "HF_TOKEN", "value": v},
					map[string]any{"name": "NGC_API_KEY", "value": v},
					map[string]any{"name": "MODEL_NAME", "value": v},
				},
			}
		}
		annotations := map[string]any{"model.aibom.dev/base": v, "model.aibom.dev/token": v}
		suffix := string(rune('a' + i))
		workloads = append(workloads,
			workload{deploymentGK, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "deploy-" + suffix, "annotations": annotations},
				"spec": map[string]any{
					"selector": map[string]any{"matchLabels": map[string]any{"app": "s" + suffix}},
					"template": map[string]any{
						"metadata": map[string]any{"labels": map[string]any{"app": "s" + suffix}, "annotations": annotations},
						"spec":     map[string]any{"containers": []any{container("main", vllmImage)}},
					},
				},
			}}},
			workload{nimGK, nimService("nim-"+suffix, map[string]any{
				"image": nimImage(), "annotations": annotations,
				"args": []any{"--model", v}, "env": container("x", "y")["env"],
			})},
			workload{dgdGK, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
				"metadata": map[string]any{"name": "graph-" + suffix},
				"spec": map[string]any{
					"backendFramework": "vllm",
					"env":              []any{map[string]any{"name": "MODEL_SRC", "value": v}, map[string]any{"name": "HF_TOKEN", "value": v}},
					"components": []any{map[string]any{
						"name": "decode", "type": "worker",
						"modelRef": map[string]any{"name": v},
						"podTemplate": map[string]any{
							"metadata": map[string]any{"annotations": annotations},
							"spec": map[string]any{"containers": []any{func() map[string]any {
								c := container("main", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0")
								c["args"] = append(c["args"].([]any), "--served-model-name=$(MODEL_SRC)")
								return c
							}()}},
						},
					}},
				},
			}}},
		)
	}
	for _, w := range workloads {
		create(t, ns, w.obj)
	}
	for _, w := range workloads {
		a := waitAIBOM(t, ns, w.gk, w.obj.GetName(), ready)
		doc := a.Status.Document
		require.NoError(t, document.ValidateSchema([]byte(doc)))
		require.Contains(t, doc, `"aibom.redaction.0"`, "%s %s: redactions are recorded", w.gk.Kind, w.obj.GetName())
		require.Contains(t, doc, "REDACTED", "%s %s: a masked value says so in place", w.gk.Kind, w.obj.GetName())
		status := strings.Join([]string{doc, a.Status.Summary.Model, strings.Join(a.Status.Summary.Models, ","), a.Status.Summary.Runtime}, "\n")
		for _, c := range a.Status.Conditions {
			status += "\n" + c.Message
		}
		for _, s := range secrets {
			require.NotContains(t, status, s, "%s %s leaks a secret", w.gk.Kind, w.obj.GetName())
		}
	}
}
