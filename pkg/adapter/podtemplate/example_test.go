package podtemplate_test

import (
	"fmt"

	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// A Deployment's spec.template, as unstructured JSON, scraped with the
// Deployment's annotations.
func ExampleScrapeTemplate() {
	template := map[string]any{
		"spec": map[string]any{
			"containers": []any{
				map[string]any{
					"name":  "vllm",
					"image": "vllm/vllm-openai:v0.6.3",
					"args":  []any{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--port", "8000"},
					"env": []any{
						map[string]any{"name": "HF_TOKEN", "value": "hf_notarealtokenbutlooksliketoken0123"},
					},
					"volumeMounts": []any{map[string]any{"name": "weights", "mountPath": "/models"}},
				},
			},
			"volumes": []any{
				map[string]any{"name": "weights", "persistentVolumeClaim": map[string]any{"claimName": "llama-weights"}},
			},
		},
	}
	f, err := podtemplate.ScrapeTemplate(template, "spec.template", podtemplate.Options{
		WorkloadAnnotations: map[string]string{"model.aibom.dev/base": "meta-llama/Llama-3.1-8B-Instruct@main"},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, c := range f.Containers {
		fmt.Printf("container %s %s at %s\n", c.Name, c.Image, c.Evidence.Locator)
	}
	for _, r := range f.Runtimes {
		fmt.Printf("runtime %s %s (%s) at %s\n", r.Name, r.Version, r.Confidence, r.Evidence.Locator)
	}
	for _, m := range f.Models {
		fmt.Printf("model %s version=%q (%s, %s) at %s\n", m.Name, m.Version, m.Confidence, m.Evidence.Source, m.Evidence.Locator)
	}
	for _, d := range f.Data {
		fmt.Printf("data %s [%s] at %s\n", d.Name, d.Kind, d.Evidence.Locator)
	}
	for _, r := range f.Redactions {
		fmt.Printf("redacted %s: %s\n", r.Locator, r.Reason)
	}
	// Output:
	// container vllm vllm/vllm-openai:v0.6.3 at spec.template.spec.containers[0].image
	// runtime vllm v0.6.3 (inferred) at spec.template.spec.containers[0].image
	// model meta-llama/Llama-3.1-8B-Instruct version="main" (declared, workload_annotation) at metadata.annotations[model.aibom.dev/base]
	// model meta-llama/Llama-3.1-8B-Instruct version="" (declared, container_arg) at spec.template.spec.containers[0].args[0](--model)
	// data weights (llama-weights) [pvc] at spec.template.spec.containers[0].volumeMounts[0](/models)
	// redacted spec.template.spec.containers[0].env[0](HF_TOKEN): secret-name
}
