package dynamo

import (
	"fmt"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// readEnv reads a list of corev1.EnvVar located at path (a graph's
// spec.envs, a service's envs, a container's env). It returns the literal
// values of the variables whose name is not secret-like (to expand "$(VAR)"
// references), and findings: an inferred model for each model env var
// (podtemplate.IsModelEnv) and a "secret-name" redaction for each literal
// value of a secret-like name, which is never read. valueFrom is never read.
func readEnv(list []any, path string) (map[string]string, adapter.Findings, error) {
	var f adapter.Findings
	literal := map[string]string{}
	for i, raw := range list {
		epath := fmt.Sprintf("%s[%d]", path, i)
		e, ok := raw.(map[string]any)
		if !ok {
			return nil, adapter.Findings{}, fields.TypeError(epath, "object", raw)
		}
		name, _, err := fields.String(e, "name", epath)
		if err != nil {
			return nil, adapter.Findings{}, err
		}
		value, hasValue, err := fields.String(e, "value", epath)
		if err != nil {
			return nil, adapter.Findings{}, err
		}
		loc := fmt.Sprintf("%s(%s)", epath, name)
		if podtemplate.IsSecretName(name) {
			if value != "" {
				f.Redactions = append(f.Redactions, adapter.Redaction{Locator: loc, Reason: podtemplate.ReasonSecretName})
			}
			continue
		}
		if e["valueFrom"] != nil || !hasValue {
			continue
		}
		literal[name] = value
		if !graphModelEnv[name] {
			continue
		}
		v := strings.TrimSpace(value)
		if v == "" || strings.Contains(v, "$") {
			continue
		}
		f.Models = append(f.Models, adapter.Model{
			Name: podtemplate.RedactInto(v, loc, &f), Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc},
		})
	}
	return literal, f, nil
}

// graphModelEnv are the env vars of a graph or a service whose value names
// a model. They are fewer than podtemplate.IsModelEnv's: a graph's or
// service's env is inherited by components that may override it, and a
// generic name (MODEL, MODEL_PATH) there is usually a default the component
// replaces; the component's own use of it ($(MODEL) in --model) is read
// where it is used.
var graphModelEnv = map[string]bool{"HF_MODEL_ID": true, "MODEL_NAME": true, "NIM_MODEL_NAME": true, "NIM_SERVED_MODEL_NAME": true}

// mergeEnv returns the variables of every map, later maps winning.
func mergeEnv(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// expandedArgModels finds the model args of a container that only resolve
// with env inherited from the graph or the service: it runs
// podtemplate.ModelFromArgs with env and keeps the models located at an
// element that has no model yet in have.
func expandedArgModels(command, args []string, env map[string]string, containerPath string, have []adapter.Model) ([]adapter.Model, []adapter.Redaction) {
	seen := map[string]bool{}
	for _, m := range have {
		seen[m.Evidence.Locator] = true
	}
	models, reds := podtemplate.ModelFromArgs(command, args, env, containerPath)
	var outM []adapter.Model
	kept := map[string]bool{}
	for _, m := range models {
		if seen[m.Evidence.Locator] {
			continue
		}
		outM = append(outM, m)
		kept[m.Evidence.Locator] = true
	}
	var outR []adapter.Redaction
	for _, r := range reds {
		if kept[r.Locator] {
			outR = append(outR, r)
		}
	}
	return outM, outR
}
