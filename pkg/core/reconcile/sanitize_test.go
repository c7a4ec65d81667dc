package reconcile

import (
	"context"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// An adapter (or a plugin) cannot write the core's properties, and what it
// returns is redacted again by the core.
func TestSanitizeFindings(t *testing.T) {
	secret := "hf_" + "Zq8wErTy5uIoP3aSdFgH7jKlZxCvBnM1q2"
	ev := adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.x"}
	f := adapter.Findings{
		Properties: []adapter.Property{
			{Name: "aibom.confidence", Value: "declared"},
			{Name: "aibom.rollup.owned.0", Value: "Deployment/forged"},
			{Name: "AIBOM.controller.name", Value: "forged"},
			{Name: "widget.token", Value: "https://u:" + secret + "@h.example/x"},
			{Name: "widget.size", Value: "3"},
		},
		Models:   []adapter.Model{{Name: "org/m-" + secret, Source: "s3://AKIAZ7FAKE2TESTONLY9:wJalr/K7MDENG/bPxRfiCYFAKEKEY@b/m", Confidence: adapter.Declared, Evidence: ev}},
		Runtimes: []adapter.Runtime{{Name: "vllm", Version: secret, Confidence: adapter.Inferred, Evidence: ev}},
	}
	before := refusedCount(t, "widgets")
	sanitize(context.Background(), "widgets", &f)
	sanitize(context.Background(), "widgets", &adapter.Findings{Properties: []adapter.Property{{Name: "aibom.match", Value: "x"}}})

	var names []string
	for _, p := range f.Properties {
		names = append(names, p.Name)
		require.NotContains(t, p.Value, secret)
	}
	require.Equal(t, []string{"widget.token", "widget.size"}, names)
	require.Equal(t, before+4, refusedCount(t, "widgets"))
	require.Equal(t, "org/m-REDACTED", f.Models[0].Name)
	require.Equal(t, "s3://REDACTED@b/m", f.Models[0].Source)
	require.NotContains(t, f.Runtimes[0].Version, secret)
	var reds []string
	for _, r := range f.Redactions {
		reds = append(reds, r.Reason+":"+r.Locator)
	}
	require.Contains(t, strings.Join(reds, " "), "url-credentials:properties[widget.token]")
	require.Contains(t, strings.Join(reds, " "), "token:spec.x")
}

func refusedCount(t *testing.T, name string) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, propertiesRefused.WithLabelValues(name).Write(&m))
	return m.GetCounter().GetValue()
}

// A container that writes its image and also says ImageFromPods runs the
// image it writes: the core drops the flag rather than reading pods for it.
func TestSanitizeKeepsAWrittenImageOverImageFromPods(t *testing.T) {
	f := adapter.Findings{Containers: []adapter.Container{
		{Name: "a", Image: "nginx:1.25", ImageFromPods: true, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.image"}},
		{Name: "b", ImageFromPods: true, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.engine"}},
	}}
	sanitize(context.Background(), "widgets", &f)
	require.False(t, f.Containers[0].ImageFromPods)
	require.Equal(t, "nginx:1.25", f.Containers[0].Image)
	require.True(t, f.Containers[1].ImageFromPods)
}

func TestModelRevisionsAreNotRedacted(t *testing.T) {
	f := adapter.Findings{Models: []adapter.Model{
		{Name: "Qwen/Qwen3-0.6B", Version: "c1899de289a04d12100db370d81485cdf75e47ca", Evidence: adapter.Evidence{Locator: "spec.a"}},
		{Name: "org/m", Version: "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", Evidence: adapter.Evidence{Locator: "spec.b"}},
	}}
	sanitize(context.Background(), "test", &f)
	if f.Models[0].Version != "c1899de289a04d12100db370d81485cdf75e47ca" {
		t.Errorf("a commit hash revision was changed: %q", f.Models[0].Version)
	}
	if strings.Contains(f.Models[1].Version, "abcdefghijklmnop") {
		t.Errorf("a token in a model version survived: %q", f.Models[1].Version)
	}
}
