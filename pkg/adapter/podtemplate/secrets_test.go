package podtemplate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

// secretShape is a fake credential in the shape of a real one. Each is
// assembled at run time from parts, so that the repository holds no literal
// a secret scanner would flag; none is a real credential.
type secretShape struct {
	name string
	// value is the credential as it would be written.
	value string
	// secret is the part that must never appear in a document (for a URL,
	// the credential inside it).
	secret string
}

func secretShapes() []secretShape {
	jwt := "eyJ" + "hbGciOiJSUzI1NiIsImtpZCI6IjAxIn0" + "." + "eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZGVmYXVsdDptb2RlbCJ9" + "." + "Qm9ndXNTaWduYXR1cmVfb25seV9mb3JfdGVzdHNfMDEyMzQ1Njc4OQ"
	awsSecret := "wJalrXUtnFEMI" + "/K7MDENG/" + "bPxRfiCY8EXAMPLEKE" // 40 characters
	pem := "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "BKcwggSjAgEAAoIBAQC7\nbm90QXJlYWxLZXk=\n-----END " + "PRIVATE KEY-----"
	sig := "5f1c" + "0a3b9e27d6c4f8a1b2c3d4e5f60718293a4b5c6d7e8f9012345678abcdef0"
	return []secretShape{
		{"github classic", "ghp_" + "R4nd0mL00k1ngT0k3nF0rT3st1ngOnly01", ""},
		{"github fine-grained", "github_pat_" + "11AZ0QFAKE0aBcDeFgHiJk_" + "lMnOpQrStUvWxYz0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01", ""},
		{"hugging face", "hf_" + "FakeTokenForTestsOnlyAbCdEfGhIj01", ""},
		{"aws access key id", "AKIA" + "Z7FAKE2TESTONLY9", ""},
		{"aws secret access key", awsSecret, ""},
		{"openai", "sk-" + "FakeOpenAIKeyForTests0123456789abcdefABCD", ""},
		{"openai project", "sk-proj-" + "Fake_Project-Key0123456789abcdefghijklmnopQRSTUV", ""},
		{"slack bot", "xoxb-" + "123456789012-1234567890123-" + "FakeSlackBotTokenAbCd", ""},
		{"jwt", jwt, ""},
		{"ngc", "nvapi-" + "FakeNgcKey_For-Tests0123456789abcdefABCDEFghij", ""},
		{"pem private key", pem, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"},
		{"bearer header", "Bearer " + "dGVzdC1vbmx5LWJlYXJlci0wMTIz", "dGVzdC1vbmx5LWJlYXJlci0wMTIz"},
		{"url user and password", "https://modeluser:" + "Sup3rS3cretPassw0rd" + "@models.example.com/org/llama", "Sup3rS3cretPassw0rd"},
		{"url token parameter", "https://models.example.com/llama.gguf?token=" + "plainsecretvalue42" + "&rev=main", "plainsecretvalue42"},
		{"presigned s3 url", "https://bucket.s3.amazonaws.com/llama.gguf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" +
			"AKIA" + "Z7FAKE2TESTONLY9" + "%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=" + sig, sig},
	}
}

// leaks returns the parts of a secret that must not appear: the secret
// itself and, for long ones, every 12-character window of it, so that a
// partial mask (a prefix kept, a suffix kept) shows as a leak too.
func leaks(s secretShape) []string {
	secret := s.secret
	if secret == "" {
		secret = s.value
	}
	out := []string{secret}
	if len(secret) > 16 {
		for i := 0; i+12 <= len(secret); i += 4 {
			w := secret[i : i+12]
			if !strings.ContainsAny(w, "\n") && !strings.Contains(w, "PRIVATE") && !strings.Contains(w, "BEGIN") {
				out = append(out, w)
			}
		}
	}
	return out
}

// A secret in every place a pod template may carry one: env values under
// secret-like names, model flags, model env vars, $(VAR) references, model
// annotations on the workload and the template, a shell script, an HTTP
// header in args, and a host path behind a model volume. None may reach the
// document built from the findings, and every masked or withheld value is
// recorded as an aibom.redaction.<i> property naming its field and reason.
func TestSecretsNeverReachTheDocument(t *testing.T) {
	for _, s := range secretShapes() {
		t.Run(s.name, func(t *testing.T) {
			value := s.value
			oneLine := strings.ReplaceAll(value, "\n", `\n`) // a shell word cannot span lines
			tmpl := map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{
					"model.aibom.dev/base":  value,
					"model.aibom.dev/token": value, // a secret-like key: never read
					"other.io/credentials":  value, // not a model annotation: never read
				}},
				"spec": map[string]any{
					"containers": []any{
						map[string]any{
							"name":  "main",
							"image": "vllm/vllm-openai:v0.6.3",
							"args": []any{
								"--model", value,
								"--served-model-name=" + value,
								"--api-key", value,
								"--header", "Authorization: " + value,
								"--model-path=$(MODEL_SOURCE)",
							},
							"env": []any{
								map[string]any{"name": "HF_TOKEN", "value": value},
								map[string]any{"name": "NGC_API_KEY", "value": value},
								map[string]any{"name": "AWS_SECRET_ACCESS_KEY", "value": value},
								map[string]any{"name": "OPENAI_API_KEY", "value": value},
								map[string]any{"name": "SLACK_BOT_TOKEN", "value": value},
								map[string]any{"name": "GITHUB_TOKEN", "value": value},
								map[string]any{"name": "DB_PASSWORD", "value": value},
								map[string]any{"name": "MODEL_NAME", "value": value},
								map[string]any{"name": "HF_MODEL_ID", "value": "org/model " + value}, // white space: not a model, never read
								map[string]any{"name": "MODEL_SOURCE", "value": value},
							},
							"volumeMounts": []any{map[string]any{"name": "weights", "mountPath": "/models"}},
						},
						map[string]any{
							"name":    "shell",
							"image":   "lmsysorg/sglang:v0.4.0",
							"command": []any{"sh", "-c", "huggingface-cli login --token " + oneLine + " && vllm serve " + oneLine + " --model " + oneLine},
						},
					},
					// A word of its own: an AWS secret key is recognised only
					// standing alone (inside a path it looks like a path).
					"volumes": []any{map[string]any{"name": "weights", "hostPath": map[string]any{"path": "/mnt/cache " + oneLine}}},
				},
			}
			f, err := ScrapeTemplate(tmpl, "spec.template", Options{WorkloadAnnotations: map[string]string{"model.aibom.dev/served": value}})
			require.NoError(t, err)
			res, err := document.Build(document.Input{
				Subject:  document.Subject{APIVersion: "apps/v1", Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "llm"},
				Findings: f,
			})
			require.NoError(t, err)
			require.NoError(t, document.ValidateSchema(res.JSON))
			doc := string(res.JSON)
			// JSON escapes some characters; compare the decoded strings too.
			var decoded any
			require.NoError(t, json.Unmarshal(res.JSON, &decoded))
			plain := fmt.Sprint(decoded)
			for _, leak := range leaks(s) {
				require.NotContains(t, doc, leak, "the document leaks the secret")
				require.NotContains(t, plain, leak, "the document leaks the secret")
			}

			red := redactions(t, res.JSON)
			c0 := "spec.template.spec.containers[0]"
			// Withheld because of their names.
			for i, name := range []string{"HF_TOKEN", "NGC_API_KEY", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "SLACK_BOT_TOKEN", "GITHUB_TOKEN", "DB_PASSWORD"} {
				require.Contains(t, red, fmt.Sprintf("secret-name:%s.env[%d](%s)", c0, i, name))
			}
			require.Contains(t, red, "secret-name:spec.template.metadata.annotations[model.aibom.dev/token]")
			// Masked where they became a model or data name. A value with
			// white space in args or a script is split into words there:
			// the model is its first word, and the rest is never read.
			var words []string
			if !strings.ContainsAny(value, " \n") {
				words = []string{
					c0 + ".args[0](--model)",
					c0 + ".args[2](--served-model-name)",
					c0 + ".args[7](--model-path)",
					c0 + ".env[7](MODEL_NAME)",
				}
				// In a shell script an unquoted "&" ends the command: the
				// rest of the value is another command, never read.
				if !strings.Contains(value, "&") {
					words = append(words,
						"spec.template.spec.containers[1].command[2](--model)",
						"spec.template.spec.containers[1].command[2](vllm serve)")
				}
			}
			for _, loc := range append(words,
				"spec.template.metadata.annotations[model.aibom.dev/base]",
				"metadata.annotations[model.aibom.dev/served]",
				c0+".volumeMounts[0](/models)",
			) {
				require.True(t, hasRedactionAt(red, loc), "no redaction recorded at %s; recorded: %v", loc, red)
			}
			require.Contains(t, doc, Redacted, "a masked value says so in place")
		})
	}
}

// redactions returns the values of the document's aibom.redaction.<i>
// properties ("<reason>:<locator>"), checking they are numbered 0..n-1.
func redactions(t *testing.T, doc []byte) []string {
	t.Helper()
	var bom struct {
		Metadata struct {
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(doc, &bom))
	var out []string
	for _, p := range bom.Metadata.Properties {
		if strings.HasPrefix(p.Name, "aibom.redaction.") {
			require.Equal(t, fmt.Sprintf("aibom.redaction.%d", len(out)), p.Name)
			out = append(out, p.Value)
		}
	}
	return out
}

func hasRedactionAt(red []string, locator string) bool {
	for _, r := range red {
		if strings.HasSuffix(r, ":"+locator) && (strings.HasPrefix(r, ReasonToken+":") || strings.HasPrefix(r, ReasonURLCredentials+":")) {
			return true
		}
	}
	return false
}

// Every shape is recognised by Redact on its own, with the reason its kind
// calls for, and a value around it survives.
func TestRedactRecognisesRealTokenShapes(t *testing.T) {
	for _, s := range secretShapes() {
		t.Run(s.name, func(t *testing.T) {
			got, reasons := Redact("org/model " + s.value + " tail")
			require.NotEmpty(t, reasons)
			for _, leak := range leaks(s) {
				require.NotContains(t, got, leak)
			}
			require.True(t, strings.HasPrefix(got, "org/model "), got)
			require.True(t, strings.HasSuffix(got, " tail"), got)
		})
	}
}

// Values that look a little like secrets but are not stay as written: model
// names and paths must not be masked by the newer shapes.
func TestRedactKeepsLookalikes(t *testing.T) {
	for _, v := range []string{
		"meta-llama/Llama-3.1-8B-Instruct",
		"/models/mistralai/Mistral-7B-Instruct-v0.3/snapshots",
		"Qwen/Qwen2.5-Coder-32B-Instruct-GPTQ-Int4",
		"deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
		"xoxo-gossip-model", "basic", "Basic English model", "bearer-model-v1",
		"s3://bucket/models/llama-3/ckpt",
		"TheBloke/Mixtral-8x7B-Instruct-v0.1-GPTQ",
		"skeleton-key-model", "task-specific/sk-short",
	} {
		got, reasons := Redact(v)
		require.Equal(t, v, got)
		require.Empty(t, reasons, v)
	}
}

// A secret-shaped env var name or model annotation key (they become
// locators) is masked in the locator too.
func TestSecretShapedNamesAreMaskedInLocators(t *testing.T) {
	key := "hf_" + "FakeTokenForTestsOnlyAbCdEfGhIj01"
	tmpl := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"model.aibom.dev/" + key: "org/model"}},
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "main", "image": "vllm/vllm-openai:v0.6.3",
			"env": []any{map[string]any{"name": key, "value": "x"}, map[string]any{"name": "MODEL_NAME", "value": "org/m"}},
		}}},
	}
	f, err := ScrapeTemplate(tmpl, "spec.template", Options{})
	require.NoError(t, err)
	res, err := document.Build(document.Input{Subject: document.Subject{Kind: "Deployment", Name: "d"}, Findings: f})
	require.NoError(t, err)
	require.NotContains(t, string(res.JSON), key)
	require.Contains(t, string(res.JSON), "spec.template.metadata.annotations[model.aibom.dev/REDACTED]")
}
