package document

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaFiles are the official CycloneDX 1.6 JSON schema and the two schemas
// it refers to, copied unmodified from the cyclonedx-go module (see
// testdata/schema/README.md).
//
//go:embed testdata/schema/bom-1.6.schema.json testdata/schema/spdx.schema.json testdata/schema/jsf-0.82.schemax.json
var schemaFiles embed.FS

// bomSchemaID is the $id of the CycloneDX 1.6 JSON schema.
const bomSchemaID = "http://cyclonedx.org/schema/bom-1.6.schema.json"

// schemaResources maps each embedded file to the $id it is registered under.
// The bom schema refers to the others by $id, so registering them resolves
// its remote $refs without any network access.
var schemaResources = []struct{ file, id string }{
	{"testdata/schema/bom-1.6.schema.json", bomSchemaID},
	{"testdata/schema/spdx.schema.json", "http://cyclonedx.org/schema/spdx.schema.json"},
	{"testdata/schema/jsf-0.82.schemax.json", "http://cyclonedx.org/schema/jsf-0.82.schema.json"},
}

var (
	bomSchemaOnce sync.Once
	bomSchema     *jsonschema.Schema
	bomSchemaErr  error
)

// offlineLoader refuses every URL: all the schemas are registered up front.
type offlineLoader struct{}

func (offlineLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s is not bundled; refusing to fetch it", url)
}

func compileBOMSchema() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(offlineLoader{})
	for _, r := range schemaResources {
		raw, err := schemaFiles.ReadFile(r.file)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", r.file, err)
		}
		if err := c.AddResource(r.id, doc); err != nil {
			return nil, fmt.Errorf("register %s: %w", r.file, err)
		}
	}
	return c.Compile(bomSchemaID)
}

// ValidateSchema validates doc against the official CycloneDX 1.6 JSON
// schema, which is bundled: it never touches the network. Format assertions
// (date-time, iri-reference, ...) are enforced, as draft-07 prescribes. It
// also checks the referential rules the schema cannot express: bom-refs are
// unique and every dependency ref resolves. It returns nil when doc is a
// valid CycloneDX 1.6 document.
func ValidateSchema(doc []byte) error {
	bomSchemaOnce.Do(func() { bomSchema, bomSchemaErr = compileBOMSchema() })
	if bomSchemaErr != nil {
		return fmt.Errorf("document: compile CycloneDX 1.6 schema: %w", bomSchemaErr)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("document: not JSON: %w", err)
	}
	if err := bomSchema.Validate(v); err != nil {
		return fmt.Errorf("document: not valid CycloneDX 1.6: %w", err)
	}
	return checkReferences(doc)
}

// checkReferences enforces what the schema cannot: bom-refs are unique
// across the document, and every ref of the dependency graph names the
// workload (metadata.component) or a component.
func checkReferences(doc []byte) error {
	var bom struct {
		Metadata struct {
			Component struct {
				BOMRef string `json:"bom-ref"`
			} `json:"component"`
		} `json:"metadata"`
		Components []struct {
			BOMRef string `json:"bom-ref"`
		} `json:"components"`
		Dependencies []struct {
			Ref       string   `json:"ref"`
			DependsOn []string `json:"dependsOn"`
		} `json:"dependencies"`
	}
	if err := json.Unmarshal(doc, &bom); err != nil {
		return fmt.Errorf("document: %w", err)
	}
	refs := map[string]bool{}
	if r := bom.Metadata.Component.BOMRef; r != "" {
		refs[r] = true
	}
	for _, c := range bom.Components {
		if c.BOMRef == "" {
			continue
		}
		if refs[c.BOMRef] {
			return fmt.Errorf("document: bom-ref %q appears twice", c.BOMRef)
		}
		refs[c.BOMRef] = true
	}
	for _, d := range bom.Dependencies {
		if !refs[d.Ref] {
			return fmt.Errorf("document: dependency of %q, which names no component", d.Ref)
		}
		for _, on := range d.DependsOn {
			if !refs[on] {
				return fmt.Errorf("document: %q depends on %q, which names no component", d.Ref, on)
			}
		}
	}
	return nil
}
