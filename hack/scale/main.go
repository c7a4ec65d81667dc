// Command scale runs the scale harness (test/scale): it starts a local
// control plane, loads realistic ownership chains (Dynamo, Grove, LWS, NIM,
// CronJob, plain vLLM Deployments, with running pods) over opted-in
// namespaces, runs bin/aibom-controller against it and prints what the
// controller cost: time until every AIBOM is correct, API requests by verb
// and resource, writes per root, steady-state writes, reconcile latency and
// peak RSS.
//
//	make scale                                   # 10,000 objects over 50 namespaces
//	go run ./hack/scale -namespaces 2 -objects 300
//	go run ./hack/scale -deployments 1000        # the peer's load
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/test/scale"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		opts scale.Options
		out  string
	)
	flag.IntVar(&opts.Namespaces, "namespaces", 50, "Namespaces the load is spread over.")
	flag.IntVar(&opts.OptedIn, "opted-in", 0, "How many of the namespaces opt in, the first ones (0: all); the rest of the load must cost the controller nothing.")
	flag.BoolVar(&opts.Toggle, "toggle", false, "After the quiet period, opt the first namespace out and in again: time until its AIBOMs are gone and back, requests, live heap before and after.")
	flag.IntVar(&opts.Objects, "objects", 10000, "Objects of the mixed load (chains are added until they reach it).")
	flag.IntVar(&opts.Deployments, "deployments", 0, "Instead of the mixed load, that many plain vLLM Deployments with a ReplicaSet and one running Pod each (the peer's measurement).")
	flag.IntVar(&opts.Generic, "generic", 0, "Instead of the mixed load, that many roots no adapter declares: ServingGroups (a stand-in operator) owning 2 Pods or a Deployment, and bare vLLM Pods, in turn.")
	flag.IntVar(&opts.Writers, "writers", 8, "Concurrent writers of the load, the annotation pass and the write replay.")
	flag.IntVar(&opts.MaxConcurrentReconciles, "max-concurrent-reconciles", 0, "Passed to the controller (0: its default).")
	flag.DurationVar(&opts.DiscoveryInterval, "discovery-interval", 0, "Passed to the controller (0: its default).")
	flag.DurationVar(&opts.ResyncInterval, "resync-interval", 0, "Passed to the controller (0: its default); the quiet period shows the cost of its passes.")
	flag.DurationVar(&opts.Quiet, "quiet", 30*time.Second, "How long to watch the steady state after the annotation pass.")
	flag.DurationVar(&opts.Timeout, "timeout", 15*time.Minute, "Bound of each wait.")
	flag.IntVar(&opts.Rounds, "rounds", 1, "How many cold starts, each followed by the replay of its writes, to time: after the first, each round deletes every AIBOM and restarts the controller. Each round's convergence / replay ratio is reported, and their median.")
	flag.BoolVar(&opts.Replay, "replay", true, "Re-issue the controller's cold-start writes after it stopped, to time the API server's own share.")
	flag.StringVar(&opts.Controller, "controller", "", "Controller binary (default: bin/aibom-controller of the repository).")
	flag.StringVar(&opts.WorkDir, "workdir", "", "Where the kubeconfig and the controller log go (default: _out/scale).")
	flag.StringVar(&opts.HeapProfile, "heap-profile", "", "Write the controller's heap profile (after a GC, once the cold start settled) to this file; read it with `go tool pprof -top -inuse_space FILE`.")
	flag.StringVar(&opts.CPUProfile, "cpu-profile", "", "Write the controller's CPU profile of its cold start (from its start, for -cpu-profile-seconds) to this file; read it with `go tool pprof -top FILE`.")
	flag.IntVar(&opts.CPUProfileSeconds, "cpu-profile-seconds", 20, "Length of the -cpu-profile and -apiserver-profile profiles.")
	flag.StringVar(&opts.APIServerProfile, "apiserver-profile", "", "Write the API server's CPU profiles, from the controller's start and from the replay's (for -cpu-profile-seconds), to PREFIX.cold and PREFIX.replay; compare them with `go tool pprof -top -diff_base PREFIX.replay PREFIX.cold`.")
	flag.StringVar(&opts.GoMemLimit, "gomemlimit", "", "The controller's GOMEMLIMIT, e.g. 400MiB (default: none, as an unset environment).")
	flag.StringVar(&opts.GoGC, "gogc", "", "The controller's GOGC (default: the runtime's, 100).")
	flag.StringVar(&out, "out", "", "Also write the report as JSON to this file.")
	flag.Parse()

	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	if opts.Controller == "" {
		opts.Controller = filepath.Join(root, "bin", "aibom-controller")
	}
	if _, err := os.Stat(opts.Controller); err != nil {
		return fmt.Errorf("controller binary: %w (run `make build`)", err)
	}
	if opts.WorkDir == "" {
		opts.WorkDir = filepath.Join(root, "_out", "scale")
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return err
	}
	opts.Log = os.Stderr
	// The harness's own AIBOM watch logs nothing; the controller logs to
	// its own file.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	rep, runErr := scale.Run(ctx, opts)
	rep.WriteMarkdown(os.Stdout)
	if out != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return runErr
}
