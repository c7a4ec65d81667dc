package release

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// env is the control plane of the server-side checks and the qualification
// run: a real kube-apiserver and etcd (bin/k8s), with the chart's CRD.
var (
	env       *harness.Env
	clientset *kubernetes.Clientset
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets, _ = filepath.Abs(repoPath("bin", "k8s"))
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(chartDir, "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := te.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release: start control plane (run `make tools`):", err)
		return 1
	}
	defer func() { _ = te.Stop() }()
	c, err := client.New(cfg, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env = &harness.Env{Env: te, Config: cfg, Client: c}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The release namespace, as `helm install --create-namespace` makes it.
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNamespace}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if binDir != "" {
			_ = os.RemoveAll(binDir)
		}
	}()
	return m.Run()
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// binaries builds the controller and the CLI the way `make build` does
// (the Makefile's link flags) once per test process, and returns their
// directory.
func binaries(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		var ldflags string
		out, err := exec.Command("make", "-s", "-C", repoPath(), "print-version").Output()
		if err != nil {
			binErr = fmt.Errorf("make print-version: %w", err)
			return
		}
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "LDFLAGS="); ok {
				ldflags = v
			}
		}
		if ldflags == "" {
			binErr = fmt.Errorf("make print-version printed no LDFLAGS: %s", out)
			return
		}
		if binDir, binErr = os.MkdirTemp("", "aibom-release-bin-"); binErr != nil {
			return
		}
		for _, b := range []struct{ out, pkg string }{{"aibom-controller", "./cmd/controller"}, {"aibom", "./cmd/aibom"}} {
			cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", filepath.Join(binDir, b.out), b.pkg)
			cmd.Dir = repoPath()
			if msg, err := cmd.CombinedOutput(); err != nil {
				binErr = fmt.Errorf("go build %s: %v: %s", b.pkg, err, msg)
				return
			}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}
