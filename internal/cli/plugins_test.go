package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildNIMPlugin builds testdata/nimplugin (the in-tree nim adapter served
// as a plugin) into dir.
func buildNIMPlugin(t *testing.T, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a plugin binary; skipped with -short")
	}
	bin := filepath.Join(dir, "nim")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/nimplugin").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// aibom scan loads an out-of-tree adapter exactly as the controller does,
// by path or from a directory, and the host resolves the plugin's
// references among the input objects.
func TestScanLoadsAdapterPlugins(t *testing.T) {
	dir := t.TempDir()
	bin := buildNIMPlugin(t, dir)
	const manifest = "testdata/plugin-nim.yaml"

	// Without the plugin, no adapter knows NIMService: what shows an AI
	// signal in its spec is read generically (the NIMCache's model field),
	// and nothing resolves the service's cache reference.
	code, out, errOut := run(t, "scan", "-f", manifest, "--adapters", "apps", "-o", "json")
	require.Equal(t, ExitOK, code, errOut)
	require.NotContains(t, out, `"meta-llama/Llama-3.2-1B-Instruct"`)
	require.Contains(t, errOut, "read generically")

	for name, args := range map[string][]string{
		"path": {"--adapter-plugin", bin},
		"dir":  {"--adapter-plugin-dir", dir},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, append([]string{"scan", "-f", manifest, "--adapters", "apps", "-o", "json"}, args...)...)
			require.Equal(t, ExitOK, code, errOut)
			require.Contains(t, out, `"meta-llama/Llama-3.2-1B-Instruct"`)
			require.Contains(t, out, `"NIMCache/llama-hf:spec.source.hf.modelName"`)
			require.Contains(t, out, `"aibom.reference.0.state"`)
		})
	}

	// The same adapter in tree and as a plugin is refused.
	code, _, errOut = run(t, "scan", "-f", manifest, "--adapter-plugin", bin)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, `adapter "nim" enabled twice`)

	// A plugin that is not executable is a usage error naming it.
	notExec := filepath.Join(dir, "not-a-plugin")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	code, _, errOut = run(t, "scan", "-f", manifest, "--adapters", "apps", "--adapter-plugin", notExec)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "not-a-plugin")
}
