package document

// go test -run '^$' -bench . -benchmem -count 5 ./pkg/core/document/

import (
	"fmt"
	"testing"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// benchSmall is a root with one container, one runtime and one model, its
// digest read from a pod.
func benchSmall() Input {
	const c0 = "spec.template.spec.containers[0]"
	return Input{
		Subject: Subject{APIVersion: "apps/v1", Group: "apps", Kind: "Deployment", Namespace: "ml", Name: "llama", UID: "6f1c2b9e-3d4a-4e5f-8a7b-1c2d3e4f5a6b"},
		Tool:    Tool{Name: ToolName, Version: "v0.1.0"},
		Findings: adapter.Findings{
			Scrapers:   []adapter.Scraper{{Name: "podtemplate", Version: "0.1.0", Method: "pod-template"}},
			Containers: []adapter.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.6.3", Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: c0 + ".image"}}},
			Runtimes:   []adapter.Runtime{{Name: "vllm", Version: "v0.6.3", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: c0 + ".image"}}},
			Models:     []adapter.Model{{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: c0 + ".args[1](--model)"}}},
			Properties: []adapter.Property{{Name: "k8s.replicas", Value: "2"}},
		},
		Digests: []ContainerDigest{{
			Digest: "sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4", Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourcePodStatus, Locator: "pods/llama-7d9f8c6b5-x2x4z.status.containerStatuses[name=vllm].imageID"},
		}},
	}
}

// benchLarge is a root that absorbed 100 workloads: 200 containers (each
// with a resolved digest and an image-pattern runtime claim), 50 models, 50
// data sources.
func benchLarge() Input {
	in := benchSmall()
	in.Subject = Subject{APIVersion: "example.com/v1", Group: "example.com", Kind: "Graph", Namespace: "ml", Name: "big-graph", UID: "0d6c7a1e-58f2-4f0b-9a51-2b7e0c3d4e5f"}
	in.Findings.Containers, in.Findings.Runtimes, in.Findings.Models, in.Digests = nil, nil, nil, nil
	for i := range 200 {
		group := fmt.Sprintf("component-%03d", i/2)
		loc := fmt.Sprintf("spec.components[%d].podSpec.containers[%d].image", i/2, i%2)
		image := fmt.Sprintf("registry.example.com/serving/runtime-%d:v1.%d.%d", i%7, i%5, i)
		in.Findings.Containers = append(in.Findings.Containers, adapter.Container{Name: fmt.Sprintf("c%d", i%2), Image: image, Group: group, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc}})
		in.Findings.Runtimes = append(in.Findings.Runtimes, adapter.Runtime{Name: fmt.Sprintf("runtime-%d", i%7), Version: fmt.Sprintf("v1.%d.%d", i%5, i), Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: loc}})
		in.Digests = append(in.Digests, ContainerDigest{
			Digest: fmt.Sprintf("sha256:%064x", i+1), Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourcePodStatus, Locator: fmt.Sprintf("pods/%s-0.status.containerStatuses[name=c%d].imageID", group, i%2)},
		})
	}
	for i := range 50 {
		in.Findings.Models = append(in.Findings.Models, adapter.Model{Name: fmt.Sprintf("org/model-%02d", i), Version: "main", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: fmt.Sprintf("spec.components[%d].podSpec.containers[0].args[1](--model)", i)}})
		in.Findings.Data = append(in.Findings.Data, adapter.Data{Name: fmt.Sprintf("cache-%02d (pvc-%02d)", i, i), Kind: "pvc", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: fmt.Sprintf("spec.components[%d].podSpec.volumes[0]", i)}})
	}
	for i := range 100 {
		in.Owned = append(in.Owned, fmt.Sprintf("ComponentDeployment/big-graph-component-%03d", i))
	}
	return in
}

// BenchmarkBuild measures document.Build. large/cap=64KiB is the large root
// under a cap it exceeds, so that components are dropped to fit.
func BenchmarkBuild(b *testing.B) {
	capped := benchLarge()
	capped.MaxBytes = 64 << 10
	for _, tc := range []struct {
		name string
		in   Input
	}{
		{"small", benchSmall()},
		{"large", benchLarge()},
		{"large/cap=64KiB", capped},
	} {
		b.Run(tc.name, func(b *testing.B) {
			res, err := Build(tc.in)
			if err != nil {
				b.Fatal(err)
			}
			if tc.in.MaxBytes > 0 && res.Truncated == 0 {
				b.Fatalf("%s: expected truncation, document is %d bytes", tc.name, len(res.JSON))
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err = Build(tc.in)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(res.JSON)), "doc-bytes")
		})
	}
}
