package podtemplate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

func TestIsVersionTag(t *testing.T) {
	tests := []struct {
		tag  string
		want bool
	}{
		{"1.12.0", true},
		{"v0.6.3", true},
		{"1.8.0-rtx", true},
		{"24.08-py3", true},
		{"0.6.3.post1", true},
		{"", false},
		{"latest", false},
		{"1", false},
		{"v1", false},
		{"main", false},
		{"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", false},
		{"1.2-", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, IsVersionTag(tt.tag), tt.tag)
	}
}

func TestModelAnnotations(t *testing.T) {
	tests := []struct {
		name string
		m    map[string]any
		want map[string]string
		err  string
	}{
		{"nil object", nil, nil, ""},
		{"no annotations", map[string]any{"labels": map[string]any{}}, nil, ""},
		{"null annotations", map[string]any{"annotations": nil}, nil, ""},
		{"model annotations only", map[string]any{"annotations": map[string]any{
			"model.aibom.dev/name": "meta/llama", "model.aibom.dev/null": nil,
			"other.io/x": int64(1), "plain": true,
		}}, map[string]string{"model.aibom.dev/name": "meta/llama", "model.aibom.dev/null": ""}, ""},
		{"annotations not an object", map[string]any{"annotations": []any{}}, nil,
			"spec.template.metadata.annotations: expected object, got list"},
		{"model annotation not a string", map[string]any{"annotations": map[string]any{"model.aibom.dev/name": int64(3)}}, nil,
			"spec.template.metadata.annotations[model.aibom.dev/name]: expected string, got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ModelAnnotations(tt.m, "spec.template.metadata")
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestClaimTemplateNames(t *testing.T) {
	claim := func(name any) any { return map[string]any{"metadata": map[string]any{"name": name}} }
	tests := []struct {
		name string
		m    map[string]any
		want []string
	}{
		{"nil", nil, nil},
		{"none", map[string]any{}, nil},
		{"not a list", map[string]any{"volumeClaimTemplates": "x"}, nil},
		{"names in order", map[string]any{"volumeClaimTemplates": []any{claim("models"), claim("cache")}}, []string{"models", "cache"}},
		{"malformed skipped", map[string]any{"volumeClaimTemplates": []any{
			"x", map[string]any{}, map[string]any{"metadata": "x"}, claim(int64(1)), claim(""), claim("data"),
		}}, []string{"data"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ClaimTemplateNames(tt.m), tt.name)
	}
}

func TestRedactInto(t *testing.T) {
	tests := []struct {
		name, in string
		redacted bool
	}{
		{"plain value", "meta-llama/Llama-3.1-8B", false},
		{"empty", "", false},
		{"token", "hf-hub://" + tokHF + "@meta/llama", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f adapter.Findings
			got := RedactInto(tt.in, "spec.x", &f)
			want, reasons := Redact(tt.in)
			require.Equal(t, want, got)
			require.Len(t, f.Redactions, len(reasons))
			for i, r := range reasons {
				require.Equal(t, adapter.Redaction{Locator: "spec.x", Reason: r}, f.Redactions[i])
			}
			if tt.redacted {
				require.NotEmpty(t, f.Redactions)
				require.NotContains(t, got, tokHF)
			} else {
				require.Empty(t, f.Redactions)
				require.Equal(t, tt.in, got)
			}
		})
	}
}
