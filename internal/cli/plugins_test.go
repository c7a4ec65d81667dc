package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

	data, err := os.ReadFile(bin)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	for name, args := range map[string][]string{
		"path":   {"--adapter-plugin", bin},
		"pinned": {"--adapter-plugin", bin + "@sha256:" + hex.EncodeToString(sum[:])},
		"dir":    {"--adapter-plugin-dir", dir},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, append([]string{"scan", "-f", manifest, "--adapters", "apps", "-o", "json"}, args...)...)
			require.Equal(t, ExitOK, code, errOut)
			require.Contains(t, out, `"meta-llama/Llama-3.2-1B-Instruct"`)
			require.Contains(t, out, `"NIMCache/llama-hf:spec.source.hf.modelName"`)
			require.Contains(t, out, `"aibom.reference.0.state"`)
		})
	}

	// A pin that does not match is refused, as the controller refuses it.
	code, _, errOut = run(t, "scan", "-f", manifest, "--adapters", "apps", "--adapter-plugin", bin+"@sha256:"+strings.Repeat("0", 64))
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "not the pinned")
	require.NotContains(t, errOut, "lstat")

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

// aibom adapters test runs the conformance suite on a plugin binary, pinned
// as the controller pins it, with a profiletest fixture folder.
func TestAdaptersTestRunsTheSuiteOnAPlugin(t *testing.T) {
	dir := t.TempDir()
	bin := buildNIMPlugin(t, t.TempDir())
	data, err := os.ReadFile("testdata/plugin-nim.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "service.yaml"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "expect.yaml"),
		[]byte("fixtures:\n  service:\n    models: [{name: meta-llama/Llama-3.2-1B-Instruct}]\n"), 0o644))
	bin, err = filepath.Abs(bin)
	require.NoError(t, err)
	sum, err := os.ReadFile(bin)
	require.NoError(t, err)
	digest := sha256.Sum256(sum)
	code, out, errOut := run(t, "adapters", "test", "--adapter-plugin", bin+"@sha256:"+hex.EncodeToString(digest[:]), dir)
	require.Equal(t, ExitOK, code, "%s%s", out, errOut)
	require.Contains(t, out, "ok  plugin ")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "expect.yaml"),
		[]byte("fixtures:\n  service:\n    models: [{name: someone/else}]\n"), 0o644))
	code, out, _ = run(t, "adapters", "test", "--adapter-plugin", bin, dir)
	require.Equal(t, ExitInput, code)
	require.Contains(t, out, "someone/else")
}
