package document

import (
	"bytes"
	"embed"
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
// returns nil when doc is a valid CycloneDX 1.6 document.
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
	return nil
}
