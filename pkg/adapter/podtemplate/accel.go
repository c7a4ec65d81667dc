package podtemplate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// acceleratorPrefixes are the extended resources of accelerators: a
// resource named "<prefix>..." is one ("nvidia.com/gpu",
// "nvidia.com/mig-1g.5gb", "aws.amazon.com/neuroncore"). Read-only.
var acceleratorPrefixes = []string{
	"nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu", "google.com/tpu", "cloud-tpus.google.com/",
	"habana.ai/", "aws.amazon.com/neuron", "gpu.intel.com/", "xilinx.com/", "qualcomm.com/qaic",
	"furiosa.ai/", "tenstorrent.com/", "cambricon.com/", "huawei.com/ascend", "sophgo.com/",
}

// IsAcceleratorResource reports whether a resource name is an accelerator's.
func IsAcceleratorResource(name string) bool {
	for _, p := range acceleratorPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// accelerators lists the accelerator limits and requests of a container
// (limits first, one entry per resource) and its dynamic resource claims.
// resources is the container's unstructured "resources" field; only the
// accelerator entries are read, so a malformed quantity of another resource
// (cpu, memory) is not this scraper's concern.
func accelerators(resources any, cpath string) []adapter.Accelerator {
	res, _ := resources.(map[string]any)
	var out []adapter.Accelerator
	seen := map[string]bool{}
	for _, field := range []string{"limits", "requests"} {
		list, _ := res[field].(map[string]any)
		names := make([]string, 0, len(list))
		for n := range list {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !IsAcceleratorResource(n) || seen[n] {
				continue
			}
			q, ok := quantity(list[n])
			if !ok || q.IsZero() {
				continue
			}
			seen[n] = true
			out = append(out, adapter.Accelerator{Resource: n, Quantity: q.String(),
				Evidence: adapter.Evidence{Source: adapter.SourceResourceRequest, Locator: fmt.Sprintf("%s.resources.%s[%s]", cpath, field, n)}})
		}
	}
	claims, _ := res["claims"].([]any)
	for i, raw := range claims {
		c, _ := raw.(map[string]any)
		name, _ := c["name"].(string)
		name, _ = Redact(name)
		out = append(out, adapter.Accelerator{Resource: "resourceclaim:" + name,
			Evidence: adapter.Evidence{Source: adapter.SourceResourceRequest, Locator: fmt.Sprintf("%s.resources.claims[%d]", cpath, i)}})
	}
	return out
}

// quantity reads a resource quantity written as a string or a number.
func quantity(v any) (resource.Quantity, bool) {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case int64:
		s = strconv.FormatInt(v, 10)
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case int:
		s = strconv.Itoa(v)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

// runtimeFromEnv names the runtime an env var belongs to (VLLM_*,
// SGLANG_*, LLAMA_ARG_*), unless it points at a remote server.
func runtimeFromEnv(name string) (string, bool) {
	n := strings.ToUpper(name)
	for _, r := range envPrefixRules {
		if !strings.HasPrefix(n, r.prefix) {
			continue
		}
		for _, w := range envClientWords {
			if hasPart(strings.ToLower(n), strings.ToLower(w)) {
				return "", false
			}
		}
		return r.runtime, true
	}
	return "", false
}

// nimImageModel is the model a NIM image names: "nvcr.io/nim/meta/llama3-8b-instruct"
// names "meta/llama3-8b-instruct".
func nimImageModel(image string) (string, bool) {
	repo, _, _ := ParseImage(image)
	rest, ok := strings.CutPrefix(repo, "nvcr.io/nim/")
	if !ok || rest == "" || lastSegment(rest) == "llm-nim" {
		return "", false // the multi-LLM NIM is told its model
	}
	return rest, true
}

// frameworkFromEnv names the framework an env var belongs to
// (frameworkEnv): TF_CONFIG is TensorFlow's cluster spec, DMLC_* MXNet's
// parameter server (DMLC_TRACKER_* XGBoost's Rabit tracker), PADDLE_*
// PaddlePaddle's launcher, HOROVOD_* Horovod's, JAX_* JAX's.
func frameworkFromEnv(name string) (string, bool) {
	n := strings.ToUpper(name)
	for _, r := range frameworkEnv {
		if n == r.name || strings.HasSuffix(r.name, "_") && strings.HasPrefix(n, r.name) && len(n) > len(r.name) {
			return r.framework, true
		}
	}
	return "", false
}
