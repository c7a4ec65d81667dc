package conformance_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// buildFlaky builds the host tests' plugin (pkg/adapter/plugin/testdata/flaky):
// it panics, crashes or hangs when the object's name says so.
func buildFlaky(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flaky")
	out, err := exec.Command("go", "build", "-o", bin, "../plugin/testdata/flaky").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

func flakyWidget(name string) conformance.Fixture {
	return conformance.Fixture{Name: name, Object: mustDecode(`
apiVersion: example.com/v1
kind: Widget
metadata: {name: ` + name + `, namespace: default}
spec: {image: "vllm/vllm-openai:v0.6.3", model: Qwen/Qwen2.5-0.5B}
`), Expect: conformance.Expect{Images: []string{"vllm/vllm-openai:v0.6.3"}, Models: []conformance.Claim{conformance.Declared("Qwen/Qwen2.5-0.5B")}}}
}

// RunPlugin runs the suite over a real plugin process: a plugin that
// behaves passes; one whose adapter panics, or whose process crashes, fails
// with a report naming the fixture, although over the wire both arrive as
// errors.
func TestRunPluginOverABuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin binary; skipped with -short")
	}
	bin := buildFlaky(t)

	rec := &conformance.Recorder{}
	require.True(t, conformance.RunPluginTB(rec, bin, []conformance.Fixture{flakyWidget("ok")}, conformance.HugeList(100)))
	require.False(t, rec.Failed(), rec.Report())
	require.Contains(t, rec.Tests(), "MalformedInput/ok")

	rec = &conformance.Recorder{}
	require.True(t, conformance.RunPluginTB(rec, bin, []conformance.Fixture{flakyWidget("ok"), flakyWidget("panic"), flakyWidget("crash")},
		conformance.HugeList(100),
		conformance.Skip("MalformedInput/panic", "every variant panics alike"),
		conformance.Skip("MalformedInput/crash", "every variant crashes alike; each costs a restart")))
	t.Logf("report:\n%s", rec.Report())
	require.True(t, rec.Failed())
	var panicked, crashed bool
	for _, f := range rec.Failures() {
		panicked = panicked || strings.Contains(f.Message, `the plugin failed on fixture "panic": adapter flaky panicked: flaky: panicking on purpose`)
		crashed = crashed || (strings.Contains(f.Message, `the plugin failed on fixture "crash"`) && strings.Contains(f.Message, "crashed (its process exited)"))
		require.NotContains(t, f.Test, "/ok", "the good fixture passes: %s", f.Message)
	}
	require.True(t, panicked, "a panic in the plugin is not reported as one")
	require.True(t, crashed, "a crash of the plugin is not reported as one")

	// A file that is no plugin is reported, not run.
	rec = &conformance.Recorder{}
	require.False(t, conformance.RunPluginTB(rec, filepath.Join(t.TempDir(), "missing"), nil))
	require.True(t, rec.Failed())
}
