package dynamo

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// runtimeNames maps the values of spec.backendFramework (the CRD enum) to the
// runtime names documents use.
var runtimeNames = map[string]string{
	"vllm":   "vllm",
	"sglang": "sglang",
	"trtllm": "tensorrt-llm",
}

// RuntimeName returns the runtime a backendFramework value names: "vllm",
// "sglang", or "tensorrt-llm" for "trtllm". Other values are not runtimes.
func RuntimeName(backendFramework string) (string, bool) {
	n, ok := runtimeNames[backendFramework]
	return n, ok
}

// workerTypes are the component types the operator detects a backend for;
// every other type (frontend, planner, epp, ...) runs no backend.
var workerTypes = map[string]bool{"worker": true, "prefill": true, "decode": true}

// backendPatterns are the operator's own detection patterns
// (deploy/operator/internal/dynamo/graph.go, detectBackendFrameworkFromArgs),
// with the module name captured so that it can be located. They are applied
// to the main container's command and args joined with spaces.
var backendPatterns = []struct {
	framework string
	re        *regexp.Regexp
}{
	{"sglang", regexp.MustCompile(`python[0-9.]*\s+[^|&;]*-m\s+[^|&;]*(dynamo\.sglang)[^|&;]*`)},
	{"trtllm", regexp.MustCompile(`python[0-9.]*\s+[^|&;]*-m\s+[^|&;]*(dynamo\.trtllm)[^|&;]*`)},
	{"vllm", regexp.MustCompile(`python[0-9.]*\s+[^|&;]*-m\s+[^|&;]*(dynamo\.vllm)[^|&;]*`)},
}

// DetectBackend finds the backend framework a Dynamo worker runs the way the
// operator does: command and args are joined into one string and matched
// against "python[0-9.]* … -m … dynamo.<framework>". containerPath is the
// main container's locator. The runtime is Inferred, located at the command
// or args element that names the module, e.g.
// "spec.services.VllmDecodeWorker.extraPodSpec.mainContainer.args[0](dynamo.vllm)".
// No match, or matches of more than one framework (which the operator
// rejects), give no runtime.
func DetectBackend(command, args []string, containerPath string) (adapter.Runtime, bool) {
	type element struct {
		start  int
		field  string
		index  int
		source adapter.Source
	}
	var elems []element
	var b strings.Builder
	add := func(list []string, field string, src adapter.Source) {
		for i, s := range list {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			elems = append(elems, element{start: b.Len(), field: field, index: i, source: src})
			b.WriteString(s)
		}
	}
	add(command, "command", adapter.SourceContainerCommand)
	add(args, "args", adapter.SourceContainerArg)
	full := b.String()

	found := ""
	pos := -1
	for _, p := range backendPatterns {
		loc := p.re.FindStringSubmatchIndex(full)
		if loc == nil {
			continue
		}
		if found != "" {
			return adapter.Runtime{}, false // ambiguous: the operator refuses it
		}
		found, pos = p.framework, loc[2]
	}
	if found == "" {
		return adapter.Runtime{}, false
	}
	el := elems[0]
	for _, e := range elems {
		if e.start > pos {
			break
		}
		el = e
	}
	return adapter.Runtime{
		Name:       runtimeNames[found],
		Confidence: adapter.Inferred,
		Evidence: adapter.Evidence{
			Source:  el.source,
			Locator: fmt.Sprintf("%s.%s[%d](dynamo.%s)", containerPath, el.field, el.index, found),
		},
	}, true
}
