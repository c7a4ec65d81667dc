// Command flaky is an adapter plugin for the host's tests: it scrapes
// Widget.example.com objects, and crashes, hangs or panics, answers with a
// huge response or floods its stderr on request (the object's name says
// which).
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

type flaky struct{}

func (flaky) Name() string { return "flaky" }

func (flaky) Kinds() []adapter.Kind {
	return []adapter.Kind{{Group: "example.com", Kind: "Widget", Resource: "widgets", Versions: []string{"v1"}, Role: adapter.RoleTracked}}
}

func (flaky) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj.GetKind() != "Widget" {
		return adapter.Findings{}, fmt.Errorf("flaky: kind %q is not tracked", obj.GetKind())
	}
	switch obj.GetName() {
	case "crash":
		fmt.Fprintln(os.Stderr, "flaky: crashing on purpose")
		os.Exit(3)
	case "hang":
		select {} // ignores its context on purpose
	case "panic":
		panic("flaky: panicking on purpose")
	case "fail":
		return adapter.Findings{}, fmt.Errorf("flaky: refusing %s on purpose", obj.GetName())
	case "crash-secret":
		// To the process's stderr, as the Go runtime writes a fatal
		// error: go-plugin reads it to the end before it reports the exit.
		fmt.Fprintln(os.NewFile(2, "stderr"), "flaky: crashing with token "+secretToken)
		os.Exit(3)
	case "noisy":
		noisy()
	case "leaky":
		// Findings that carry secrets, as a plugin that does not redact
		// would return them.
		return adapter.Findings{
			Models: []adapter.Model{{Name: "https://user:hunter2@models.example.com/llama", Source: "hf://org/llama?token=" + secretToken,
				Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.env[" + secretToken + "]"}}},
			Properties: []adapter.Property{{Name: "flaky.login", Value: "Bearer " + secretToken}},
		}, nil
	case "leaky-error":
		return adapter.Findings{}, fmt.Errorf("flaky: cannot log in with %s\nforged line", secretToken)
	case "flood":
		n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "lines")
		for i := range n {
			fmt.Fprintf(os.Stderr, "flaky: flood line %d\n", i)
		}
	}
	image, _, _ := unstructured.NestedString(obj.Object, "spec", "image")
	f := adapter.Findings{
		Scrapers:   []adapter.Scraper{{Name: "flaky", Version: "0.0.1", Method: "crd-spec"}},
		Containers: []adapter.Container{{Name: "main", Image: image, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.image"}}},
	}
	if model, _, _ := unstructured.NestedString(obj.Object, "spec", "model"); model != "" {
		f.Models = []adapter.Model{{Name: model, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.model"}}}
	}
	// spec.responseBytes pads the response to about that size.
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "responseBytes"); n > 0 {
		f.Properties = []adapter.Property{{Name: "flaky.padding", Value: strings.Repeat("x", int(n))}}
	}
	return f, nil
}

// secretToken is a Hugging Face token shape that the host must never log.
const secretToken = "hf_FlakyPluginSecretToken0123456789abcdef"

// noisy writes, to os.Stderr (forwarded over gRPC) and to the process's own
// stderr (file descriptor 2), a line carrying a token, a line of 1 MiB, a
// line with terminal escapes and a forged log line, then a marker.
func noisy() {
	fd2 := os.NewFile(2, "stderr")
	for _, w := range []struct {
		f    *os.File
		name string
	}{{os.Stderr, "grpc"}, {fd2, "fd2"}} {
		fmt.Fprintf(w.f, "flaky(%s): logging in with token %s\n", w.name, secretToken)
		fmt.Fprintf(w.f, "flaky(%s): long line %s\n", w.name, strings.Repeat("y", 1<<20))
		fmt.Fprintf(w.f, "flaky(%s): escape \x1b[31mred\x1b[0m\rforged\n", w.name)
		fmt.Fprintf(w.f, `{"@level":"warn","@message":"flaky(%s): json with token %s","key":"Bearer abcdefghijklmnopqrstuvwxyz"}`+"\n", w.name, secretToken)
		fmt.Fprintf(w.f, "flaky(%s): done\n", w.name)
	}
}

func main() { plugin.Serve(flaky{}) }
