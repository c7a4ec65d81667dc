package podtemplate

import "github.com/aibom-dev/aibom/pkg/adapter"

// ModelFromValue records the model a CRD field's value names, the way a
// model flag's value is read: a hub id ("Qwen/Qwen3-8B"), a storage URI
// ("hf://org/model", "s3://bucket/path/name", "pvc://claim/path") with the
// name it states and the URI as the model's Source, or a path. A location
// that states no model name is recorded as model storage (adapter.Data,
// kind "location") instead. Placeholders are skipped. Values are redacted
// and each redaction is recorded at locator. It reports whether a model was
// recorded. served, when not empty and different from the name, becomes the
// model's ServedName.
func ModelFromValue(value string, conf adapter.Confidence, src adapter.Source, locator, served string, f *adapter.Findings) bool {
	return addModelValue(f, value, conf, src, locator, served)
}
