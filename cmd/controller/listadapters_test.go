package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aibom-dev/aibom/internal/adapterinfo"
)

// --list-adapters is a dry run of a start: it exits non-zero for a plugin
// loaded twice or a kind claimed twice, which a start refuses, and lists
// every adapter with its source and path otherwise, as text or JSON.
func TestListAdaptersIsADryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the controller and plugin binaries; skipped with -short")
	}
	dir := t.TempDir()
	build := func(out, pkg string) string {
		t.Helper()
		bin := filepath.Join(dir, out)
		if b, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return bin
	}
	controller := build("aibom-controller", ".")
	flaky := build("flaky", "../../pkg/adapter/plugin/testdata/flaky")
	dynamo := build("dynamo", "../../pkg/adapter/plugin/testdata/dynamo")

	run := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(controller, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}

	_, stderr, code := run("--list-adapters", "--adapter-plugin", flaky, "--adapter-plugin", flaky)
	if code == 0 || !strings.Contains(stderr, `adapter "flaky" enabled twice`) {
		t.Errorf("the same plugin twice: exit %d, stderr %q; want a refusal", code, stderr)
	}
	// The in-tree dynamo adapter served as a plugin, next to the in-tree
	// one (a kind collision as well; the registry names the adapter first).
	_, stderr, code = run("--list-adapters", "--adapters", "all", "--adapter-plugin", dynamo)
	if code == 0 || !strings.Contains(stderr, `adapter "dynamo" enabled twice`) {
		t.Errorf("a plugin duplicating an in-tree adapter: exit %d, stderr %q; want a refusal", code, stderr)
	}
	_, _, code = run("--list-adapters", "--adapters", "batch", "--adapter-plugin", dynamo)
	if code != 0 {
		t.Errorf("the same plugin without the in-tree dynamo adapter: exit %d, want 0", code)
	}

	stdout, stderr, code := run("--list-adapters", "--adapters", "batch", "--adapter-plugin", flaky)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"core     core", "batch    in-tree  Job.batch", "flaky    plugin   Widget.example.com", flaky} {
		if !strings.Contains(stdout, want) {
			t.Errorf("listing lacks %q:\n%s", want, stdout)
		}
	}

	stdout, stderr, code = run("--list-adapters=json", "--adapters", "batch", "--adapter-plugin", flaky)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var l adapterinfo.Listing
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if len(l.Adapters) != 3 || l.Adapters[2].Source != adapterinfo.SourcePlugin || l.Adapters[2].Path != flaky {
		t.Errorf("JSON listing = %+v", l)
	}

	// A profile file that does not load stops the start, naming the file and
	// the line; so does an inline cap below the smallest every document fits.
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("apiVersion: aibom.dev/v1alpha1\nkind: AIBOMAdapterProfile\nmetadata: {name: broken}\nspec:\n  version: 0.1.0\n  kinds:\n  - {group: example.com, kind: Gizmo, versions: [v1], role: tracked}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run("--list-adapters", "--adapter-profile", broken)
	if code == 0 || !strings.Contains(stderr, broken) || !strings.Contains(stderr, "YAML line 7") {
		t.Errorf("a broken profile file: exit %d, stderr %q; want a refusal naming the file and line", code, stderr)
	}
	_, stderr, code = run("--list-adapters", "--max-document-bytes", "1024")
	if code == 0 || !strings.Contains(stderr, "must be between 8192") {
		t.Errorf("--max-document-bytes=1024: exit %d, stderr %q; want a refusal", code, stderr)
	}
}
