package plugin_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// pluginDir holds the test plugins, built once per test binary.
var (
	pluginDir   string
	pluginMu    sync.Mutex
	pluginBuilt = map[string]string{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aibom-plugin-test-")
	if err != nil {
		panic(err)
	}
	pluginDir = dir
	code := m.Run()
	plugin.CleanupClients()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildPlugin builds the main package testdata/<name> with go build (once
// per test binary) and returns the binary's path.
func buildPlugin(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a plugin binary; skipped with -short")
	}
	pluginMu.Lock()
	defer pluginMu.Unlock()
	if p, ok := pluginBuilt[name]; ok {
		return p
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the test plugin: %v", err)
	}
	out := filepath.Join(pluginDir, name)
	cmd := exec.Command(goBin, "build", "-o", out, "./testdata/"+name)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/%s: %v\n%s", name, err, b)
	}
	pluginBuilt[name] = out
	return out
}

func widget(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": "ml"},
		"spec":       map[string]any{"image": "example.com/widget:1.0"},
	}}
}

func scrapeOK(t *testing.T, a adapter.Adapter) {
	t.Helper()
	f, err := a.Scrape(context.Background(), widget("ok"))
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	if len(f.Containers) != 1 || f.Containers[0].Image != "example.com/widget:1.0" {
		t.Fatalf("scrape found %+v, want the widget's image", f.Containers)
	}
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

// waitUntilUp calls scrapeOK once the client's backoff has passed.
func waitUntilUp(t *testing.T, c *plugin.Client, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, err := c.Scrape(context.Background(), widget("ok"))
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "is down") || time.Now().After(deadline) {
			t.Fatalf("plugin did not come back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOpenServesNameKindsAndScrape(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	c, err := plugin.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if c.Name() != "flaky" {
		t.Errorf("Name() = %q, want the plugin's name flaky", c.Name())
	}
	kinds := c.Kinds()
	if len(kinds) != 1 || kinds[0].String() != "Widget.example.com" || kinds[0].Role != adapter.RoleTracked {
		t.Errorf("Kinds() = %+v", kinds)
	}
	kinds[0].Versions[0] = "changed"
	if c.Kinds()[0].Versions[0] != "v1" {
		t.Errorf("Kinds() does not return a copy")
	}
	scrapeOK(t, c)

	// An adapter error is the adapter's message, and the plugin stays up.
	_, err = c.Scrape(context.Background(), widget("fail"))
	mustContain(t, err, "flaky: refusing fail on purpose")
	if errors.Is(err, plugin.ErrFault) || errors.Is(err, plugin.ErrAdapterPanicked) {
		t.Errorf("an adapter's own error is classified as a fault or a panic: %v", err)
	}
	// A panic in the plugin is an error, as in process, that says it is a
	// panic (the conformance suite fails it); the plugin stays up.
	_, err = c.Scrape(context.Background(), widget("panic"))
	mustContain(t, err, "adapter flaky panicked", "panicking on purpose")
	if !errors.Is(err, plugin.ErrAdapterPanicked) || errors.Is(err, plugin.ErrFault) {
		t.Errorf("a panic is not classified as one: %v", err)
	}
	scrapeOK(t, c)
	if c.Restarts() != 0 {
		t.Errorf("Restarts() = %d after adapter errors, want 0", c.Restarts())
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = c.Scrape(context.Background(), widget("ok"))
	mustContain(t, err, "closed")
}

func TestCrashedPluginIsRestartedWithBackoff(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	c, err := plugin.Open(bin, plugin.Backoff(300*time.Millisecond, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	scrapeOK(t, c)

	_, err = c.Scrape(context.Background(), widget("crash"))
	mustContain(t, err, `adapter plugin "flaky"`, "crashed", "restarted on a call after")
	t.Logf("crash: %v", err)
	if !errors.Is(err, plugin.ErrFault) || errors.Is(err, plugin.ErrDown) {
		t.Errorf("a crash is not a plugin fault, or says the plugin was down before: %v", err)
	}

	// Meanwhile calls fail fast with a clear error.
	_, err = c.Scrape(context.Background(), widget("ok"))
	mustContain(t, err, `adapter plugin "flaky"`, "is down", "crashed")
	if !errors.Is(err, plugin.ErrFault) || !errors.Is(err, plugin.ErrDown) {
		t.Errorf("a plugin that is down is not a plugin fault that says so: %v", err)
	}

	waitUntilUp(t, c, 5*time.Second)
	if c.Restarts() != 1 {
		t.Errorf("Restarts() = %d, want 1", c.Restarts())
	}
	scrapeOK(t, c)
}

func TestHungPluginIsKilledAndRestarted(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	c, err := plugin.Open(bin, plugin.ScrapeTimeout(500*time.Millisecond), plugin.Backoff(100*time.Millisecond, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	start := time.Now()
	_, err = c.Scrape(context.Background(), widget("hang"))
	mustContain(t, err, "did not answer", "hung")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a hung scrape returned after %s, want about the scrape timeout", d)
	}
	waitUntilUp(t, c, 5*time.Second)
	if c.Restarts() != 1 {
		t.Errorf("Restarts() = %d, want 1", c.Restarts())
	}
}

func TestCallerDeadlineDoesNotRestartThePlugin(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	c, err := plugin.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Scrape(ctx, widget("hang"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's deadline", err)
	}
	scrapeOK(t, c)
	if c.Restarts() != 0 {
		t.Errorf("Restarts() = %d, want 0", c.Restarts())
	}
}

func TestGarbagePluginIsRefused(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "junk")
	script := "#!/bin/sh\necho 'hello, I am not a plugin'\nsleep 30\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := plugin.Open(bin, plugin.StartTimeout(5*time.Second))
	mustContain(t, err, bin, "is not an aibom adapter plugin", `"hello, I am not a plugin"`, "plugin.Serve")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %s", d)
	}
	t.Logf("garbage: %v", err)
}

func TestPluginExitingAtStartIsRefused(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "quitter")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'cannot start: no config' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := plugin.Open(bin)
	mustContain(t, err, bin)
	t.Logf("exiting: %v", err)
}

func TestOtherProtocolVersionIsRefused(t *testing.T) {
	bin := buildPlugin(t, "otherversion")
	_, err := plugin.Open(bin)
	mustContain(t, err, bin, "another protocol version", "Plugin version: 2")
	t.Logf("other version: %v", err)
}

func TestNotExecutableIsRefused(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := plugin.Open(bin)
	mustContain(t, err, "not executable")
}

func TestRunByHandDescribesThePlugin(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	cmd := exec.Command(bin)
	cmd.Env = []string{} // no magic cookie
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("run by hand: err = %v, want a non-zero exit", err)
	}
	for _, want := range []string{"aibom adapter plugin", "adapter:   flaky", "contract version 1", "Widget.example.com", "tracked", "--adapter-plugin"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
}

func TestOpenDir(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	dir := t.TempDir()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flaky"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Neither a plain file nor a hidden one is started.
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("plugins"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".hidden"), []byte("#!/bin/sh\necho junk\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	clients, err := plugin.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer plugin.CleanupClients()
	if len(clients) != 1 || clients[0].Name() != "flaky" {
		t.Fatalf("OpenDir opened %d plugins", len(clients))
	}
	scrapeOK(t, clients[0])

	// A junk file among them fails the whole directory, naming it.
	if err := os.WriteFile(filepath.Join(dir, "junk"), []byte("#!/bin/sh\necho junk\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = plugin.OpenDir(dir)
	mustContain(t, err, filepath.Join(dir, "junk"), "not an aibom adapter plugin")
}
