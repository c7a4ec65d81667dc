package document

import (
	"bytes"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/stretchr/testify/require"
)

// The XML form carries the same components, dependencies and properties as
// the JSON it is made from, and reads back as CycloneDX 1.6.
func TestToXML(t *testing.T) {
	res, err := Build(rollup())
	require.NoError(t, err)
	x, err := ToXML(res.JSON)
	require.NoError(t, err)
	require.Contains(t, string(x), `xmlns="http://cyclonedx.org/schema/bom/1.6"`)

	var fromJSON, fromXML cdx.BOM
	require.NoError(t, cdx.NewBOMDecoder(bytes.NewReader(res.JSON), cdx.BOMFileFormatJSON).Decode(&fromJSON))
	require.NoError(t, cdx.NewBOMDecoder(bytes.NewReader(x), cdx.BOMFileFormatXML).Decode(&fromXML))
	require.Equal(t, fromJSON.SerialNumber, fromXML.SerialNumber)
	require.Len(t, *fromXML.Components, len(*fromJSON.Components))
	require.Len(t, *fromXML.Dependencies, len(*fromJSON.Dependencies))
	for i, c := range *fromJSON.Components {
		x := (*fromXML.Components)[i]
		require.Equal(t, c.BOMRef, x.BOMRef)
		require.Equal(t, c.PackageURL, x.PackageURL)
		require.Equal(t, *c.Properties, *x.Properties)
	}
	_, err = ToXML([]byte("{not json"))
	require.Error(t, err)
}
