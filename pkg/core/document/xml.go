package document

import (
	"bytes"
	"fmt"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// ToXML re-encodes a document (the JSON Build writes) as CycloneDX 1.6 XML
// through cyclonedx-go's encoder. The XML form has everything the JSON has
// except component evidence, which cyclonedx-go does not write in XML: the
// aibom.confidence property stays, the locators are in the JSON only.
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
	return buf.Bytes(), nil
}
