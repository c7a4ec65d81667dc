package profile

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file error names the field's path and line, and says YAML for YAML.
func TestParseErrorsNameThePathAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, doc, format, path string
		line                    int
		msg                     string
	}{
		{name: "unknown field in a rule", format: "YAML", path: "spec.kinds[0].rules.models[0].nmae", line: 15, msg: `unknown field "nmae"`, doc: `apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: x}
spec:
  version: 0.1.0
  kinds:
  - group: x.example.com
    kind: X
    resource: xs
    versions: [v1]
    role: tracked
    rules:
      models:
      - path: spec
        nmae: y
`},
		{name: "wrong shape", format: "YAML", path: "spec.kinds[0].versions", line: 7, msg: "want a list", doc: `apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: x}
spec:
  version: 0.1.0
  kinds:
  - {group: x.example.com, kind: X, resource: xs, versions: v1, role: tracked}
`},
		{name: "json", format: "JSON", path: "spec.kinds[0].rules.containers[0].nmae", line: 1,
			doc: `{"apiVersion":"aibom.dev/v1alpha1","kind":"AIBOMAdapterProfile","metadata":{"name":"x"},"spec":{"version":"1","kinds":[{"group":"x.io","kind":"X","resource":"xs","versions":["v1"],"role":"tracked","rules":{"containers":[{"path":"spec","nmae":"a"}]}}]}}`},
		{name: "syntax", format: "YAML", doc: "apiVersion: aibom.dev/v1alpha1\nkind: AIBOMAdapterProfile\nmetadata: {name: x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "f.yaml")
			require.Error(t, err)
			var de *DecodeError
			require.True(t, errors.As(err, &de), "%v", err)
			require.Equal(t, tc.format, de.Format)
			require.Equal(t, tc.path, de.Path)
			if tc.line > 0 {
				require.Equal(t, tc.line, de.Line, "%v", err)
			}
			require.Contains(t, de.Msg, tc.msg)
			require.NotContains(t, err.Error(), "JSON: ", "no decoder wording")
		})
	}
}

// A profile that decodes but does not validate names the rule's path and
// the line of the rule in the file.
func TestCompileErrorsInAFileNameTheLine(t *testing.T) {
	_, err := Parse([]byte(`apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: x}
spec:
  version: 0.1.0
  kinds:
  - group: x.example.com
    kind: X
    resource: xs
    versions: [v1]
    role: tracked
    rules:
      containers:
      - {path: spec, name: a}
      - path: "spec.roles[*]"
        namePattern: "{roles[*].name}-x"
`), "f.yaml")
	require.ErrorContains(t, err, "spec.kinds[0].rules.containers[1].namePattern")
	require.ErrorContains(t, err, "(YAML line 16)")
}
