package nim

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// PropertyNIMCacheSource names the source of the referenced NIMCache:
// "hf", "ngc" or "dataStore".
const PropertyNIMCacheSource = "nim.nimCache.source"

// nimCache looks up the NIMCache a NIMService names (spec.storage.nimCache.name,
// at locator) and reads the model it caches. A NIMCache that cannot be read
// is an unresolved model claim named "NIMCache/<name>"; the rest of the
// findings stand.
func (s *scraper) nimCache(name, locator string) {
	ref := adapter.Reference{Group: Group, Kind: "NIMCache", Name: name, Locator: locator}
	obj, err := adapter.Resolve(s.ctx, ref)
	if err != nil {
		s.f.Models = append(s.f.Models, adapter.Model{
			Name: s.redact(ref.String(), locator), Confidence: adapter.Unresolved,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: locator},
		})
		return
	}
	readNIMCache(ref, obj, &s.f)
}

// readNIMCache reads the model a NIMCache's spec.source declares, each
// fact located in the NIMCache ("NIMCache/<name>:spec.source.hf.modelName"):
//
//   - hf and dataStore: "<namespace>/<modelName>", declared, versioned by
//     revision, its Source the endpoint's URI for it ("hf://<id>" for the
//     Hugging Face hub or no endpoint); a datasetName is a dataset (Data
//     kind "dataset");
//   - ngc: the model of modelEndpoint when set (declared), and the model
//     the modelPuller image implies (ModelFromImage, inferred).
//
// Values of an unexpected type are skipped: a malformed NIMCache never
// fails its NIMService's scrape.
func readNIMCache(ref adapter.Reference, obj *unstructured.Unstructured, f *adapter.Findings) {
	source, _, _ := unstructured.NestedMap(obj.Object, "spec", "source")
	for _, kind := range []string{"hf", "dataStore"} {
		src, ok := source[kind].(map[string]any)
		if !ok {
			continue
		}
		f.Properties = append(f.Properties, adapter.Property{Name: PropertyNIMCacheSource, Value: kind})
		base := "spec.source." + kind
		ns, _ := src["namespace"].(string)
		endpoint, _ := src["endpoint"].(string)
		revision, _ := src["revision"].(string)
		for _, field := range []string{"modelName", "datasetName"} {
			n, _ := src[field].(string)
			if n == "" {
				continue
			}
			id := n
			if ns != "" {
				id = ns + "/" + n
			}
			loc := ref.FieldLocator(base + "." + field)
			if field == "datasetName" {
				f.Data = append(f.Data, adapter.Data{Name: podtemplate.RedactInto(id, loc, f), Kind: "dataset", Confidence: adapter.Declared,
					Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc}})
				continue
			}
			m := adapter.Model{Name: podtemplate.RedactInto(id, loc, f), Version: podtemplate.RedactInto(revision, loc, f),
				Source: podtemplate.RedactInto(sourceURI(endpoint, id), loc, f), Confidence: adapter.Declared,
				Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc}}
			f.Models = append(f.Models, m)
		}
	}
	if ngc, ok := source["ngc"].(map[string]any); ok {
		f.Properties = append(f.Properties, adapter.Property{Name: PropertyNIMCacheSource, Value: "ngc"})
		if ep, ok := ngc["modelEndpoint"].(string); ok && ep != "" {
			podtemplate.ModelFromValue(ep, adapter.Declared, adapter.SourceCRDField, ref.FieldLocator("spec.source.ngc.modelEndpoint"), "", f)
		}
		if puller, ok := ngc["modelPuller"].(string); ok {
			if model, ok := ModelFromImage(puller); ok {
				loc := ref.FieldLocator("spec.source.ngc.modelPuller")
				f.Models = append(f.Models, adapter.Model{Name: podtemplate.RedactInto(model, loc, f), Confidence: adapter.Inferred,
					Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: loc}})
			}
		}
	}
}

// sourceURI is where a hub-style source reads a model from.
func sourceURI(endpoint, id string) string {
	e := strings.TrimRight(endpoint, "/")
	if e == "" || e == "https://huggingface.co" || e == "https://www.huggingface.co" {
		return "hf://" + id
	}
	return e + "/" + id
}
