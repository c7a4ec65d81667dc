package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's examples of the command line are what the commands print.
func TestREADMEExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	example := func(command, out string) {
		t.Helper()
		require.Contains(t, string(readme), command+"\n```\n\n```\n"+out+"```\n",
			"README.md's example of %q is stale; its output is now:\n%s", command, out)
	}

	code, out, errOut := run(t, "scan", filepath.Join("..", "..", "examples"))
	require.Equal(t, ExitOK, code, errOut)
	require.Empty(t, errOut)
	require.True(t, strings.HasPrefix(out, "NAMESPACE"))
	example("go run ./cmd/aibom scan examples/", out)

	code, out, errOut = run(t, "tree", filepath.Join("..", "..", "examples", "40-dynamo-graph.yaml"))
	require.Equal(t, ExitOK, code, errOut)
	example("go run ./cmd/aibom tree examples/40-dynamo-graph.yaml", out)

	// The diff example is TestDiffCommand's digest change.
	diff, err := os.ReadFile(filepath.Join("testdata", "golden", "diff-digest.txt"))
	require.NoError(t, err)
	example("go run ./cmd/aibom diff boms/ -n default                          # later, against the cluster", string(diff))
}
