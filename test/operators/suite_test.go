//go:build qualify

// Package operators is the qualification suite (make qualify; build tag
// "qualify", so that go test ./... leaves it out): the real
// operators, built from the Go module proxy at pinned versions
// (hack/operators, hack/build-operators.sh), run as local processes against
// a local control plane with kube-controller-manager (the garbage collector
// and the workload controllers), their webhooks on 127.0.0.1. The
// controller runs with the in-tree adapters from before any operator's CRD
// exists; each test installs an operator's CRDs from its module source,
// starts it, applies its own published samples of that version, runs the
// pods as a kubelet would, and checks the documents a user would expect:
// one AIBOM per custom resource and none for its children, the owned list,
// runtime, models and frameworks, digests with pod counts; and conservation
// after a controller restart, a delete (the real collector: no AIBOM write
// for any child) and a re-create. The results are docs/compatibility.md
// (go test ./test/operators -update rewrites it; the suite fails when it is
// stale).
package operators

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
	repoRoot   string
	update     = flag.Bool("update", false, "rewrite docs/compatibility.md from this run's results")
	adapters   = flag.String("adapters", "all", "the in-tree adapters the controller runs (as the controller's --adapters flag); fewer than all shows the suite failing on a chain no adapter follows")
)

const (
	eventually = 2 * time.Minute
	tick       = 250 * time.Millisecond
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Join(filepath.Dir(file), "..", "..")
	var err error
	env, err = harness.StartEnvWith(harness.EnvOptions{ControllerManager: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "qualify:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	// Started before any operator's CRD exists: every operator's kinds
	// appear while the controller runs.
	if controller, err = startController(); err != nil {
		fmt.Fprintln(os.Stderr, "qualify: start controller:", err)
		return 1
	}
	defer func() { _ = controller.Stop() }()
	code := m.Run()
	if code == 0 && *adapters == "all" && flag.Lookup("test.run").Value.String() == "" {
		if err := results.writeOrCheck(filepath.Join(repoRoot, "docs", "compatibility.md"), *update); err != nil {
			fmt.Fprintln(os.Stderr, "qualify:", err)
			return 1
		}
	}
	return code
}

// startController runs the controller as the chart does: every in-tree
// adapter, the production grace for a dangling owner (the collector must
// delete dependents within it).
func startController() (*harness.Controller, error) {
	return startControllerWith(*adapters)
}

func startControllerWith(list string) (*harness.Controller, error) {
	selected, err := intree.Select(list)
	if err != nil {
		return nil, err
	}
	return env.StartControllerWith(harness.ControllerOptions{DanglingOwnerGrace: reconcile.DefaultDanglingGrace}, selected...)
}

// restartController stops the controller and starts a new one (a new
// process as far as the cluster can tell: new caches, new watches).
func restartController() error {
	if err := controller.Stop(); err != nil {
		return err
	}
	c, err := startController()
	if err != nil {
		return err
	}
	controller = c
	return nil
}
