package document

import (
	"bytes"
	"fmt"
	"regexp"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// ToXML re-encodes a document (the JSON Build writes) as CycloneDX 1.6 XML
// through cyclonedx-go's encoder, valid against the CycloneDX 1.6 XSD (the
// tests check it with xmllint).
func ToXML(doc []byte) ([]byte, error) {
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(doc), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return nil, fmt.Errorf("document: decode: %w", err)
	}
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatXML)
	enc.SetPretty(true)
	if err := enc.EncodeVersion(&bom, cdx.SpecVersion1_6); err != nil {
		return nil, fmt.Errorf("document: encode XML: %w", err)
	}
	return occurrenceContextAsElement(buf.Bytes()), nil
}

// occurrenceWithContext is an evidence occurrence whose additionalContext
// cyclonedx-go (v0.12.0) writes as an attribute; the 1.6 XSD defines it as
// a child element after location.
var occurrenceWithContext = regexp.MustCompile(`(?s)<occurrence additionalContext="([^"]*)">(.*?)(\s*)</occurrence>`)

// occurrenceContextAsElement moves each occurrence's additionalContext
// attribute into the element the XSD defines. The value is already escaped
// for XML, and an escaped attribute value is valid element text.
func occurrenceContextAsElement(x []byte) []byte {
	return occurrenceWithContext.ReplaceAll(x, []byte(`<occurrence>$2$3  <additionalContext>$1</additionalContext>$3</occurrence>`))
}
