package podtemplate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Realistic token shapes. They are assembled at run time so that the
// source holds no literal that a secret scanner would flag.
var (
	tokHF     = "hf_" + "xQ7bR2mK9vL4nP8sT1wY6zA3cD5eF0gHjU"
	tokGHP    = "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	tokGHO    = "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	tokGHPAT  = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF"
	tokNV     = "nvapi-" + "Qm3x9L2kP7rT5vW8yZ1aB4cD6eF0gH2jK4mN6pR8sT0"
	tokSK     = "sk-" + "proj-4fH8kL2mN9pQ3rS7tV1wX5yZ0aB6cD"
	tokAWS    = "AKIA" + "IOSFODNN7EXAMPLE"
	tokJWT    = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	tokHex    = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	tokBase64 = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
)

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"HF_TOKEN": true, "hf_token": true, "HUGGING_FACE_HUB_TOKEN": true, "NGC_API_KEY": true,
		"OPENAI_APIKEY": true, "DB_PASSWORD": true, "MYSQL_PASSWD": true, "CLIENT_SECRET": true,
		"AWS_SECRET_ACCESS_KEY": true, "AWS_ACCESS_KEY_ID": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"SSH_PRIVATE_KEY": true, "api-key": true, "x.secret": true,
		"HF_MODEL_ID": false, "MODEL_NAME": false, "PORT": false, "": false, "TOKENIZER_MODE": false, "TOKENIZER_TOKEN": true,
		"KEY_ID": false, "PASS": false,
	} {
		require.Equal(t, want, IsSecretName(name), name)
	}
}

func TestRedact(t *testing.T) {
	const digest = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	tests := []struct {
		name, in, want string
		reasons        []string
	}{
		{"plain model", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", nil},
		{"long model name", "DeepSeek-R1-Distill-Qwen-32B-Instruct-GPTQ-Int4-experimental", "DeepSeek-R1-Distill-Qwen-32B-Instruct-GPTQ-Int4-experimental", nil},
		{"path", "/models/mistralai/Mistral-7B-Instruct-v0.3", "/models/mistralai/Mistral-7B-Instruct-v0.3", nil},
		{"long letters path", "/data/models/llama/weights/checkpoint/final", "/data/models/llama/weights/checkpoint/final", nil},
		{"plain url", "https://huggingface.co/meta-llama/Llama-3.1-8B", "https://huggingface.co/meta-llama/Llama-3.1-8B", nil},
		{"s3 url", "s3://bucket/models/llama", "s3://bucket/models/llama", nil},
		{"url user pass", "https://user:pass@host.example/models/x", "https://REDACTED@host.example/models/x", []string{ReasonURLCredentials}},
		{"url token user", "https://" + tokGHP + "@github.com/org/repo", "https://REDACTED@github.com/org/repo", []string{ReasonURLCredentials}},
		{"url query token", "https://host.example/m?token=abc123&x=1", "https://host.example/m?token=REDACTED&x=1", []string{ReasonURLCredentials}},
		{"presigned", "https://b.s3.amazonaws.com/m.gguf?X-Amz-Credential=AK%2F2024&X-Amz-Signature=" + tokHex, "https://b.s3.amazonaws.com/m.gguf?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED", []string{ReasonURLCredentials}},
		{"hf token", tokHF, "REDACTED", []string{ReasonToken}},
		{"hf short not token", "hf_model", "hf_model", nil},
		{"ghp", "x " + tokGHP, "x REDACTED", []string{ReasonToken}},
		{"gho", tokGHO, "REDACTED", []string{ReasonToken}},
		{"github pat", tokGHPAT, "REDACTED", []string{ReasonToken}},
		{"nvapi", tokNV, "REDACTED", []string{ReasonToken}},
		{"sk", "key=" + tokSK, "key=REDACTED", []string{ReasonToken}},
		{"sk inside word", "disk-abcdefghijklmnopqrstuvwxyz", "disk-abcdefghijklmnopqrstuvwxyz", nil},
		{"aws", tokAWS, "REDACTED", []string{ReasonToken}},
		{"jwt", "Bearer " + tokJWT, "Bearer REDACTED", []string{ReasonToken}},
		{"hex run", "/cache/" + tokHex, "/cache/REDACTED", []string{ReasonToken}},
		{"short hex", "/cache/9f86d081884c7d65", "/cache/9f86d081884c7d65", nil},
		{"digest kept", "registry.example/m@" + digest, "registry.example/m@" + digest, nil},
		{"base64 run", tokBase64, "REDACTED", []string{ReasonToken}},
		{"both", "https://u:p@h.example/" + tokHF, "https://REDACTED@h.example/REDACTED", []string{ReasonURLCredentials, ReasonToken}},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "REDACTED", []string{ReasonToken}},
		{"empty", "", "", nil},
		{"unicode", "модель/ラマ-3", "модель/ラマ-3", nil},
		// User-info is removed whole, up to the last "@" of the authority.
		{"s3 key with slash", "s3://AKIA" + "Z7FAKE2TESTONLY9:wJalr/K7MDENG/bPxRfiCYFAKEKEY@bucket/models", "s3://REDACTED@bucket/models", []string{ReasonURLCredentials}},
		{"password with at", "https://user:p@ssw0rd@host.example/x", "https://REDACTED@host.example/x", []string{ReasonURLCredentials}},
		{"password with at and slash", "https://u:a/b@c@host.example/x", "https://REDACTED@host.example/x", []string{ReasonURLCredentials}},
		{"at in a path is not user-info", "hf://org/model@main", "hf://org/model@main", nil},
		{"git ssh url", "ssh://git@github.com/org/repo", "ssh://REDACTED@github.com/org/repo", []string{ReasonURLCredentials}},
		// Secret-looking query and fragment parameters.
		{"hf_token query", "https://host.example/m?hf_token=abcdef123&rev=main", "https://host.example/m?hf_token=REDACTED&rev=main", []string{ReasonURLCredentials}},
		{"access-token query", "https://host.example/m?access-token=abcdef123", "https://host.example/m?access-token=REDACTED", []string{ReasonURLCredentials}},
		{"fragment token", "https://host.example/cb#token=abcdef123", "https://host.example/cb#token=REDACTED", []string{ReasonURLCredentials}},
		{"harmless query", "https://host.example/m?revision=main&tokenizer=fast", "https://host.example/m?revision=main&tokenizer=fast", nil},
		// scp and NFS style locations.
		{"scp style", "alice:hunter2@nas.example:/models/llama", "REDACTED@nas.example:/models/llama", []string{ReasonURLCredentials}},
		{"scp style after flag", "--src=alice:hunter2@nas.example:/m", "--src=REDACTED@nas.example:/m", []string{ReasonURLCredentials}},
		{"ollama tag is not scp", "mistral:latest", "mistral:latest", nil},
		{"image digest is not scp", "registry.example:5000/team/vllm@" + digest, "registry.example:5000/team/vllm@" + digest, nil},
		{"two urls", "https://a:b@h1.example/x https://c:d@h2.example/y", "https://REDACTED@h1.example/x https://REDACTED@h2.example/y", []string{ReasonURLCredentials}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reasons := Redact(tt.in)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.reasons, reasons)
		})
	}
}
