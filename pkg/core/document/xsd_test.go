package document

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestXMLValidAgainstTheXSD: every golden document, and the document of a
// model with a model card, converted to XML (what "aibom scan -o
// cyclonedx-xml" prints) is valid against the CycloneDX 1.6 XSD, checked
// by xmllint (installed by "make tools"; a missing xmllint fails the test).
func TestXMLValidAgainstTheXSD(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	require.NoError(t, err, "xmllint is needed to validate XML against the XSD: run make tools (it installs libxml2-utils)")
	xsd, err := filepath.Abs(filepath.Join("testdata", "schema", "bom-1.6.xsd"))
	require.NoError(t, err)

	docs := map[string][]byte{}
	golden, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, golden)
	for _, g := range golden {
		b, err := os.ReadFile(g)
		require.NoError(t, err)
		docs[filepath.Base(g)] = b
	}
	in := vllmDeployment()
	in.Findings.Models[0].Task, in.Findings.Models[0].Architecture, in.Findings.Models[0].Quantization = "generate", "LlamaForCausalLM", "fp8"
	res, _ := build(t, in)
	docs["model-card"] = res.JSON

	dir := t.TempDir()
	for name, doc := range docs {
		x, err := ToXML(doc)
		require.NoError(t, err, name)
		path := filepath.Join(dir, name+".xml")
		require.NoError(t, os.WriteFile(path, x, 0o600))
		out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, path).CombinedOutput()
		require.NoError(t, err, "%s is not valid against the CycloneDX 1.6 XSD:\n%s", name, out)
	}
}
