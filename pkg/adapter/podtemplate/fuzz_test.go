package podtemplate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// FuzzScrapeTemplate feeds arbitrary JSON to ScrapeTemplate: it must never
// panic, and must give the same result twice.
func FuzzScrapeTemplate(f *testing.F) {
	vllm, err := yaml.YAMLToJSON([]byte(vllmTemplate))
	require.NoError(f, err)
	for _, seed := range []string{
		string(vllm),
		`{}`,
		`null`,
		`{"spec":{"containers":"x"}}`,
		`{"spec":{"containers":[null,1,"x",{"args":{"a":1}}]}}`,
		`{"spec":{"containers":[{"name":"c","image":"vllm/vllm-openai:v0.6.3","args":["--model"],"env":[{"name":"HF_MODEL_ID","valueFrom":{}}]}]}}`,
		`{"metadata":{"annotations":{"model.aibom.dev/x":["a"]}},"spec":{"volumes":7}}`,
		`{"spec":{"containers":[{"volumeMounts":[{"name":"v","mountPath":"/models"}]}],"volumes":[{"name":"v","hostPath":{"path":1}}]}}`,
		`{"spec":{"initContainers":[{"restartPolicy":"Always","image":"ollama/ollama:0.5.7","command":["vllm","serve"]}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tmpl map[string]any
		if json.Unmarshal(data, &tmpl) != nil {
			return
		}
		opts := Options{WorkloadAnnotations: map[string]string{"model.aibom.dev/m": string(data)}}
		first, err1 := ScrapeTemplate(tmpl, "spec.template", opts)
		second, err2 := ScrapeTemplate(tmpl, "spec.template", opts)
		require.Equal(t, err1, err2)
		require.Equal(t, first, second)
		_, _ = ScrapePodSpec(tmpl, "spec.podSpec", opts)
		_, _ = ScrapeContainer(tmpl, "c", ContainerOptions{})
		ParseImage(string(data))
		RuntimeFromImage(string(data))
		Redact(string(data))
	})
}
