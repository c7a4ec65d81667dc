package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's example is what the command prints.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	code, out, errOut := run(t, "scan", "-f", filepath.Join("..", "..", "examples"))
	require.Equal(t, ExitOK, code, errOut)
	require.Empty(t, errOut)
	require.Contains(t, string(readme), "go run ./cmd/aibom scan -f examples/\n```\n\n```\n"+out+"```\n",
		"README.md's example of the command line is stale; its output is now:\n%s", out)
	require.True(t, strings.HasPrefix(out, "NAMESPACE"))
}
