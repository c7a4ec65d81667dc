package profiles_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/adapters/profiles"
	"github.com/aibom-dev/aibom/internal/cli"
	"github.com/aibom-dev/aibom/pkg/adapter/profile/profiletest"
)

// TestConformance runs the adapter conformance suite over every shipped
// profile, in process, with the fixtures in testdata/<profile>: exactly as
// over a Go adapter.
func TestConformance(t *testing.T) {
	all, err := profiles.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no shipped profile")
	}
	for _, a := range all {
		t.Run(a.Name(), func(t *testing.T) {
			profiletest.Run(t, a, filepath.Join("testdata", a.Name()))
		})
	}
}

// The author's command runs the same suite: `aibom adapters test` passes on
// a shipped profile with its fixtures, and fails, printing what differs, on
// an expectation that does not hold.
func TestAdaptersTestCommandOnAShippedProfile(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.RunStreams(context.Background(), args, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("adapters", "test", "--adapter-profile", "embedded/kaito.yaml", "testdata/kaito")
	require.Equal(t, cli.ExitOK, code, "%s%s", out, errOut)
	require.Contains(t, out, "ok  profile kaito")

	// The same fixtures, one expectation wrong.
	dir := t.TempDir()
	files, err := filepath.Glob("testdata/kaito/*.yaml")
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		if filepath.Base(f) == profiletest.ExpectFile {
			data = bytes.Replace(data, []byte("phi-4-mini-instruct"), []byte("phi-5"), 1)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644))
	}
	code, out, errOut = run("adapters", "test", "--adapter-profile", "embedded/kaito.yaml", dir)
	require.Equal(t, cli.ExitInput, code, "%s%s", out, errOut)
	require.Contains(t, out, "--- FAIL: ")
	require.Contains(t, out, "phi-5")
	require.Contains(t, errOut, "checks failed")

	code, _, errOut = run("adapters", "test", "testdata/kaito")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errOut, "exactly one of --adapter-profile and --adapter-plugin")
}
