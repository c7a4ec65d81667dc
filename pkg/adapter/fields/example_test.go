package fields_test

import (
	"fmt"

	"github.com/aibom-dev/aibom/pkg/adapter/fields"
)

// An adapter reads the fields it needs from an unstructured object; what is
// not set reads as nil, what has the wrong type is an error with a locator.
func Example() {
	obj := map[string]any{
		"spec": map[string]any{
			"replicas": int64(3),
			"image":    map[string]any{"repository": "nvcr.io/nim/meta/llama3", "tag": "1.8.0"},
			"args":     []any{"--port", int64(8000)},
			"services": map[string]any{"decode.worker": "oops"},
		},
	}

	spec, _ := fields.Object(obj, "spec", "")
	img, _ := fields.Object(spec, "image", "spec")
	repo, _, _ := fields.String(img, "repository", "spec.image")
	replicas, set, _ := fields.Int(spec, "replicas", "spec")
	fmt.Println(repo, replicas, set)

	storage, err := fields.Object(spec, "storage", "spec")
	fmt.Println(storage == nil, err)

	_, err = fields.Strings(spec, "args", "spec")
	fmt.Println(err)

	services, _ := fields.Object(spec, "services", "spec")
	_, err = fields.Object(services, "decode.worker", "spec.services")
	fmt.Println(err)
	// Output:
	// nvcr.io/nim/meta/llama3 3 true
	// true <nil>
	// spec.args[1]: expected string, got number
	// spec.services[decode.worker]: expected object, got string
}
