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

// JoinServedNames makes a served name and its model one component: a claim
// whose Name is the ServedName of another claim (a "--served-model-name"
// standing alone, beside a CRD field naming the model and the served name)
// is renamed to that model, keeping its evidence, with the served name as
// its ServedName. A served name several models share is left alone (which
// one it is, is not said). models is changed in place.
func JoinServedNames(models []adapter.Model) {
	byServed := map[string]int{}
	for i, m := range models {
		if m.ServedName == "" || m.ServedName == m.Name {
			continue
		}
		if j, ok := byServed[m.ServedName]; ok && models[j].Name != m.Name {
			byServed[m.ServedName] = -1
			continue
		}
		byServed[m.ServedName] = i
	}
	for i := range models {
		n := &models[i]
		if n.ServedName != "" {
			continue
		}
		j, ok := byServed[n.Name]
		if !ok || j < 0 {
			continue
		}
		m := models[j]
		n.ServedName, n.Name = n.Name, m.Name
		if n.Version == "" {
			n.Version = m.Version
		}
		if n.Source == "" {
			n.Source = m.Source
		}
	}
}
