package dynamo

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// FuzzScrape feeds arbitrary JSON objects to Scrape as each tracked kind
// and version: it must never panic, and must give the same result twice.
// Seeded with every fixture in testdata and with malformed shapes.
func FuzzScrape(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	require.NoError(f, err)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		js, err := yaml.YAMLToJSON(b)
		require.NoError(f, err)
		f.Add(js)
	}
	for _, seed := range []string{
		`{}`,
		`{"spec":null}`,
		`{"spec":"x"}`,
		`{"spec":{"services":[]}}`,
		`{"spec":{"services":{"a.b":null,"w":{"extraPodSpec":{"mainContainer":{"image":7,"args":[{}]}}}}}}`,
		`{"spec":{"components":{}}}`,
		`{"spec":{"components":[null,1,"x",{"name":"w","podTemplate":{"spec":{"containers":[{"name":"main","args":[null]}]}}}]}}`,
		`{"spec":{"backendFramework":3,"replicas":1.5,"multinode":{"nodeCount":"2"},"modelRef":{"name":["x"]}}}`,
		`{"spec":{"envs":[{"name":"MODEL","value":"m"}],"services":{"w":{"componentType":"worker","envs":[{"name":"HF_TOKEN","value":"hf_abcdefghijklmnopqrstuvwxyz0123456789"}],"extraPodSpec":{"mainContainer":{"command":["python3","-m","dynamo.vllm"],"args":["--model","$(MODEL)"]}}}}}}`,
		`{"spec":{"volumeMounts":[{"name":"v","mountPoint":"/models"},{"mountPoint":null}],"extraPodSpec":{"volumes":{},"initContainers":["x"]}}}`,
		`{"spec":{"name":"w","type":"decode","podTemplate":{"metadata":{"annotations":{"model.aibom.dev/x":1}},"spec":{"containers":[{"name":"main","command":["python","-m","dynamo.sglang"]}]}}}}`,
	} {
		f.Add([]byte(seed))
	}
	gvks := [][2]string{{alpha, dgd}, {beta, dgd}, {alpha, dcd}, {beta, dcd}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, gvk := range gvks {
			var obj map[string]any
			if json.Unmarshal(data, &obj) != nil || obj == nil {
				return
			}
			obj["apiVersion"], obj["kind"] = gvk[0], gvk[1]
			first, err1 := New().Scrape(context.Background(), &unstructured.Unstructured{Object: obj})
			second, err2 := New().Scrape(context.Background(), &unstructured.Unstructured{Object: obj})
			require.Equal(t, err1, err2)
			require.Equal(t, first, second)
		}
	})
}
