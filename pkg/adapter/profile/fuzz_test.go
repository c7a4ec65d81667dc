package profile

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// FuzzProfile: whatever a profile file and an object hold, Parse and Scrape
// return (an error or findings) and never panic.
func FuzzProfile(f *testing.F) {
	f.Add([]byte(`apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: f}
spec:
  version: "1"
  kinds:
  - group: f.example.com
    kind: Thing
    resource: things
    versions: [v1]
    role: tracked
    rules:
      podTemplates: [{path: "spec.roles[*].template", groupByWildcard: true}]
      models: [{path: spec.graph, recurse: children, field: name, location: uri, where: [{field: impl, in: [x]}]}]
      runtimes: [{path: spec, value: vllm, reason: r}, {path: "spec.m.*", map: {a: b}}]
`), []byte(`{"spec":{"roles":[{"name":"a","template":{"spec":{"containers":[{"name":"c","image":"vllm/vllm-openai:v1"}]}}}],"graph":{"name":"g","impl":"x","uri":"s3://b/m","children":[{"name":"h"}]},"m":{"k":"a"}}}`))
	f.Fuzz(func(t *testing.T, profile, object []byte) {
		a, err := Parse(profile, "fuzz")
		if err != nil {
			return
		}
		var spec map[string]any
		if yaml.Unmarshal(object, &spec) != nil {
			return
		}
		for _, k := range a.Kinds() {
			obj := &unstructured.Unstructured{Object: map[string]any{}}
			for key, v := range spec {
				obj.Object[key] = v
			}
			obj.SetAPIVersion(k.Group + "/" + k.Versions[0])
			obj.SetKind(k.Kind)
			obj.SetName("x")
			_, _ = a.Scrape(context.Background(), obj)
			_, _ = a.ScrapeReferenced(context.Background(), obj)
		}
	})
}
