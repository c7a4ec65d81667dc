// Package scale is the scale harness: it starts a local control plane
// (kube-apiserver + etcd from bin/k8s) with the AIBOM CRD and the operators'
// stand-in CRDs, loads realistic ownership chains over opted-in namespaces
// with concurrent writers, then runs the real controller binary against it
// and measures what it costs: time until every AIBOM is correct, API
// requests by verb and resource (the controller's own
// aibom_api_requests_total), writes per root, writes and reconcile latency
// in a steady state, and the controller's peak memory.
//
// hack/scale is its command line (make scale); TestScaleSmall runs it at a
// small size in CI.
package scale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Options size and tune a run.
type Options struct {
	// Controller is the path of the aibom-controller binary. Required.
	Controller string
	// Namespaces is the number of namespaces (default 50).
	Namespaces int
	// OptedIn is how many of them opt in, the first ones (default: all).
	// The others hold their share of the load, which must cost the
	// controller nothing.
	OptedIn int
	// Toggle, after the quiet period, opts the first namespace out and
	// in again and measures both: time until its AIBOMs are gone and back,
	// requests, and the controller's live heap before and after.
	Toggle bool
	// Objects is the size of the mixed load: chains are added until the
	// objects reach it (default 10,000).
	Objects int
	// Deployments, when > 0, replaces the mixed load with the peer's load:
	// that many plain vLLM Deployments, each with a ReplicaSet and one
	// running Pod.
	Deployments int
	// Generic, when > 0 (and Deployments is not), replaces the mixed load
	// with that many roots of no adapter: ServingGroups (a stand-in
	// operator's kind) owning Pods or a Deployment, and bare Pods.
	Generic int
	// Writers is the number of concurrent writers of the load, of the
	// steady-state annotations and of the write replay (default 8).
	Writers int
	// MaxConcurrentReconciles is passed to the controller (0: its default).
	MaxConcurrentReconciles int
	// DiscoveryInterval is passed to the controller (0: its default, 30s).
	// Each interval costs one probe (a one-object list) per watched kind.
	DiscoveryInterval time.Duration
	// ResyncInterval is passed to the controller (0: its default, 10m).
	// The quiet period then shows what its passes cost.
	ResyncInterval time.Duration
	// Poll is how often progress is checked and logged (default 250ms).
	Poll time.Duration
	// Quiet is how long the steady state is watched after the annotation
	// pass settled (default 30s; negative: not at all).
	Quiet time.Duration
	// Timeout bounds each wait: convergence, settling, the annotation pass
	// (default 15 minutes).
	Timeout time.Duration
	// Replay re-issues the controller's cold-start writes (create + status
	// of each AIBOM, copies beside the originals, which are deleted first)
	// with Writers writers after the controller stopped: the API server's
	// own time for those writes.
	Replay bool
	// Rounds is how many cold starts, each with its replay, the run times
	// (Report.Rounds; 0 or 1: the first alone). After the first (the cold
	// start every other figure is about), each round deletes every AIBOM,
	// starts the controller again, times its convergence, stops it and
	// replays its writes: on a shared machine one pair of phases can be
	// 20% apart either way for the same work, and the median of several
	// pairs is the steadier figure. Needs Replay.
	Rounds int
	// HeapProfile, when set, is a file the controller's heap profile
	// (/debug/pprof/heap, after a forced GC) is written to once the cold
	// start settled; `go tool pprof -top -inuse_space FILE` reads it. The
	// controller is then started with --pprof-bind-address on a free
	// loopback port.
	HeapProfile string
	// CPUProfile, when set, is a file the controller's CPU profile of its
	// cold start is written to: /debug/pprof/profile from the controller's
	// start for CPUProfileSeconds (default 20); `go tool pprof -top FILE`
	// reads it. The controller runs with --pprof-bind-address, as for
	// HeapProfile.
	CPUProfile        string
	CPUProfileSeconds int
	// APIServerProfile, when set, is a path prefix for the API server's CPU
	// profiles (/debug/pprof/profile for CPUProfileSeconds): PREFIX.cold
	// from the controller's start, PREFIX.replay from the replay's start.
	// Side by side (`go tool pprof -top -diff_base PREFIX.replay
	// PREFIX.cold`), they show what the API server does for the controller
	// beyond the writes themselves.
	APIServerProfile string
	// GoMemLimit, when set, is the controller's GOMEMLIMIT (e.g. "400MiB"),
	// as config/manager derives it from the container's memory request.
	GoMemLimit string
	// GoGC, when set, is the controller's GOGC.
	GoGC string
	// WorkDir holds the kubeconfig and the controller's log (default: a new
	// temporary directory, kept).
	WorkDir string
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

func (o *Options) defaults() error {
	if o.Controller == "" {
		return errors.New("scale: no controller binary")
	}
	if o.Namespaces <= 0 {
		o.Namespaces = 50
	}
	if o.OptedIn <= 0 || o.OptedIn > o.Namespaces {
		o.OptedIn = o.Namespaces
	}
	if o.Objects <= 0 {
		o.Objects = 10000
	}
	if o.Writers <= 0 {
		o.Writers = 8
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.Quiet < 0 {
		o.Quiet = 0
	} else if o.Quiet == 0 {
		o.Quiet = 30 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Minute
	}
	if o.CPUProfileSeconds <= 0 {
		o.CPUProfileSeconds = 20
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if o.Rounds > 1 && !o.Replay {
		return errors.New("scale: more than one round needs the replay")
	}
	return nil
}

// CRDDirs are the stand-in operator CRDs the control plane serves, relative
// to the repository root.
var CRDDirs = []string{"test/crds/dynamo/v1beta1", "test/crds/grove", "test/crds/lws", "test/crds/nim", "test/crds/unknown"}

// processCPU is the controller's CPU time (client_golang's process
// collector, which controller-runtime registers).
const processCPU = "process_cpu_seconds_total"

// touchAnnotation is the annotation of the steady-state pass; no adapter
// reads it.
const touchAnnotation = "scale.aibom.dev/touched"

// Run plans the load, starts a control plane, loads it, runs the controller
// and measures. The report is filled as far as the run got, also on error.
func Run(ctx context.Context, opts Options) (rep Report, err error) {
	if err := opts.defaults(); err != nil {
		return rep, err
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(opts.Log, "scale: "+format+"\n", args...)
	}
	var load Load
	if opts.Deployments > 0 {
		load = PlanDeployments(opts.Namespaces, opts.Deployments)
		rep.Load.Mode = "deployments"
	} else if opts.Generic > 0 {
		load = PlanGeneric(opts.Namespaces, opts.Generic)
		rep.Load.Mode = "generic"
	} else {
		load = PlanMixed(opts.Namespaces, opts.Objects)
		rep.Load.Mode = "mixed"
	}
	optedIn := map[string]bool{}
	for _, ns := range load.Namespaces[:min(opts.OptedIn, len(load.Namespaces))] {
		optedIn[ns] = true
	}
	expected := load.In(optedIn)
	rep.fillLoad(load, expected, opts)
	rep.Machine = machine()
	logf("%s load: %d namespaces (%d opted in), %d objects (%d opted in), %d pod statuses, %d roots (%d opted in)", rep.Load.Mode, len(load.Namespaces), len(optedIn),
		rep.Load.Objects, rep.Load.OptedInObjects, rep.Load.PodStatuses, len(load.Chains), rep.Load.Roots)

	if opts.WorkDir == "" {
		if opts.WorkDir, err = os.MkdirTemp("", "aibom-scale-"); err != nil {
			return rep, err
		}
	}
	env, err := controlplane.New(CRDDirs...)
	if err != nil {
		return rep, err
	}
	logf("starting the control plane")
	cfg, err := env.Start()
	if err != nil {
		return rep, fmt.Errorf("start control plane: %w", err)
	}
	defer func() {
		if stopErr := env.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stop control plane: %w", stopErr)
		}
	}()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit: the writers measure the API server
	scheme := k8sruntime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return rep, err
	}

	// Load, before the controller starts: every pod already has its digest,
	// so a root costs exactly its create and its status.
	for _, ns := range load.Namespaces {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if optedIn[ns] {
			n.Labels = map[string]string{graph.OptInLabel: "true"}
		}
		if err := c.Create(ctx, n); err != nil {
			return rep, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	logf("loading with %d writers", opts.Writers)
	start := time.Now()
	uids, writes, err := apply(ctx, c, load, opts.Writers)
	rep.Load.Seconds = time.Since(start).Seconds()
	rep.Load.Writes = writes
	if err != nil {
		return rep, err
	}
	rep.Load.WritesPerSecond = float64(writes) / rep.Load.Seconds
	logf("loaded %d writes in %.1fs (%.0f writes/s)", writes, rep.Load.Seconds, rep.Load.WritesPerSecond)

	if err := warmWatchCaches(ctx, cfg, env.CRDs); err != nil {
		return rep, err
	}

	// Watch the AIBOMs from the start.
	track := newTracker(expected, uids)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := watchAIBOMs(watchCtx, cfg, scheme, track); err != nil {
		return rep, err
	}

	api := apiServerMetrics(cfg)
	apiBefore, err := api(ctx)
	if err != nil {
		return rep, err
	}
	cpuBefore, err := TakeCPUSnapshot(cpuProcesses)
	if err != nil {
		return rep, err
	}
	ctl, err := startController(opts, env.KubeConfig, "controller.log")
	if err != nil {
		return rep, err
	}
	defer ctl.stop()
	track.begin(ctl.started)
	logf("controller started (pid %d), log %s", ctl.cmd.Process.Pid, ctl.logPath)
	go ctl.waitReady(ctx)
	cpuDone := make(chan error, 1)
	if opts.CPUProfile != "" {
		secs := opts.CPUProfileSeconds
		go func() {
			// The profiling endpoint listens a moment after the start.
			var err error
			for try := 0; try < 50; try++ {
				if err = saveProfile(ctx, ctl.pprofURL+"profile?seconds="+strconv.Itoa(secs), opts.CPUProfile); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			cpuDone <- err
		}()
	}

	apiProfile := profileAPIServer(ctx, cfg, opts, ".cold")

	// Cold start: until every AIBOM is correct.
	if err := waitConverged(ctx, opts, track, ctl, logf); err != nil {
		return rep, err
	}
	if cpuAt, err := TakeCPUSnapshot(cpuProcesses); err == nil {
		use := cpuAt.Since(cpuBefore, time.Since(ctl.started).Seconds())
		rep.ColdStart.CPU = &use
	}
	rep.ColdStart.ReadySeconds = ctl.readySeconds()
	rep.ColdStart.ConvergedSeconds = track.doneAt.Seconds()
	rep.ColdStart.FirstAIBOMSeconds = track.firstAt.Seconds()
	if apiAfter, err := api(ctx); err == nil {
		rep.ColdStart.APIServer = apiLatency(apiAfter, apiBefore)
	}
	if _, rss, err := ProcStatus(ctl.cmd.Process.Pid); err == nil {
		rep.Memory.RSSAtConvergence = rss
	}
	logf("every AIBOM correct after %.1fs", rep.ColdStart.ConvergedSeconds)
	if opts.CPUProfile != "" {
		if err := <-cpuDone; err != nil {
			return rep, err
		}
		logf("CPU profile of the cold start written to %s", opts.CPUProfile)
	}
	if err := apiProfile(); err != nil {
		return rep, err
	}
	cold, err := settle(ctx, opts, ctl)
	if err != nil {
		return rep, fmt.Errorf("settling after the cold start: %w", err)
	}
	rep.ColdStart.Requests = cold.Requests()
	rep.ColdStart.Reconciles = int(cold.Sum("controller_runtime_reconcile_total", controllerLabel))
	rep.ColdStart.Latency = latency(cold.Histogram(reconcileTime, controllerLabel))
	rep.ColdStart.Outcomes = outcomes(cold, nil)
	rep.ColdStart.CPUSeconds = cold.Sum(processCPU, nil)
	rep.ColdStart.summarise(rep.Load.Roots)
	rep.ColdStart.Watches = rep.ColdStart.Requests["WATCH"]
	for k, v := range rep.ColdStart.Requests {
		if strings.HasPrefix(k, "WATCH ") {
			rep.ColdStart.Watches += v
		}
	}
	rep.Memory.HeapInuseSettled = int64(cold.Sum("go_memstats_heap_inuse_bytes", nil))
	if opts.HeapProfile != "" {
		if err := saveHeapProfile(ctx, ctl.pprofURL, opts.HeapProfile); err != nil {
			return rep, err
		}
		logf("heap profile written to %s", opts.HeapProfile)
	}

	// Steady state: an annotation no adapter reads on every root.
	logf("steady state: annotating %d roots", len(expected.Chains))
	start = time.Now()
	if err := annotateRoots(ctx, c, expected, opts.Writers); err != nil {
		return rep, err
	}
	rep.Steady.Annotated = len(expected.Chains)
	rep.Steady.AnnotateSeconds = time.Since(start).Seconds()
	steady, err := waitReconciles(ctx, opts, ctl, cold, len(expected.Chains))
	if err != nil {
		return rep, fmt.Errorf("steady state: %w", err)
	}
	rep.Steady.Requests = diff(steady.Requests(), cold.Requests())
	rep.Steady.Reconciles = int(steady.Sum("controller_runtime_reconcile_total", controllerLabel) - cold.Sum("controller_runtime_reconcile_total", controllerLabel))
	rep.Steady.Latency = latency(HistogramDelta(steady.Histogram(reconcileTime, controllerLabel), cold.Histogram(reconcileTime, controllerLabel)))
	rep.Steady.Outcomes = outcomes(steady, cold)
	rep.Steady.Writes = countWrites(rep.Steady.Requests)
	rep.Steady.CPUSeconds = steady.Sum(processCPU, nil) - cold.Sum(processCPU, nil)
	logf("annotation pass: %d reconciles, %d writes; quiet for %s", rep.Steady.Reconciles, rep.Steady.Writes, opts.Quiet)
	select {
	case <-ctx.Done():
		return rep, ctx.Err()
	case <-time.After(opts.Quiet):
	}
	quiet, err := scrape(ctx, ctl.metricsURL)
	if err != nil {
		return rep, err
	}
	rep.Quiet.Seconds = opts.Quiet.Seconds()
	rep.Quiet.Requests = diff(quiet.Requests(), steady.Requests())
	rep.Quiet.Writes = countWrites(rep.Quiet.Requests)
	rep.Quiet.Reconciles = int(quiet.Sum("controller_runtime_reconcile_total", controllerLabel) - steady.Sum("controller_runtime_reconcile_total", controllerLabel))
	rep.Quiet.ResyncPasses = int(quiet.Sum("aibom_resync_passes_total", nil) - steady.Sum("aibom_resync_passes_total", nil))
	rep.Quiet.ResyncEnqueued = int(quiet.Sum("aibom_resync_enqueued_total", nil) - steady.Sum("aibom_resync_enqueued_total", nil))
	rep.Quiet.CPUSeconds = quiet.Sum(processCPU, nil) - steady.Sum(processCPU, nil)
	rep.Memory.HeapInuseAtEnd = int64(quiet.Sum("go_memstats_heap_inuse_bytes", nil))

	if opts.Toggle {
		if rep.Toggle, err = toggle(ctx, opts, c, ctl, track, load, logf); err != nil {
			return rep, fmt.Errorf("opt-out and opt-in: %w", err)
		}
	}

	ok, wrong, extra, reasons := track.state(5)
	rep.CorrectAtEnd = ok
	if hwm, rss, err := ProcStatus(ctl.cmd.Process.Pid); err == nil {
		rep.Memory.PeakRSS, rep.Memory.RSSAtEnd = hwm, rss
	} else {
		return rep, err
	}
	ctl.stop()
	rep.Machine.LoadAverageEnd = loadAverage()
	if !ok {
		return rep, fmt.Errorf("after the steady state, %d AIBOMs wrong or missing and %d extra: %s", wrong, extra, strings.Join(reasons, "; "))
	}

	if opts.Replay {
		plan, err := prepareReplay(ctx, c, track)
		if err != nil {
			return rep, err
		}
		logf("replaying the controller's writes with %d writers (its %d AIBOMs deleted)", opts.Writers, plan.deleted)
		before, err := api(ctx)
		if err != nil {
			return rep, err
		}
		done := profileAPIServer(ctx, cfg, opts, ".replay")
		if rep.Replay, err = replay(ctx, c, plan, opts.Writers); err != nil {
			return rep, err
		}
		if err := done(); err != nil {
			return rep, err
		}
		if after, err := api(ctx); err == nil {
			rep.Replay.APIServer = apiLatency(after, before)
		}
		rep.Rounds = append(rep.Rounds, Round{ConvergedSeconds: rep.ColdStart.ConvergedSeconds, ReplaySeconds: rep.Replay.Seconds,
			ColdCPU: rep.ColdStart.CPU, ReplayCPU: rep.Replay.CPU})
		for n := 2; n <= opts.Rounds; n++ {
			round, err := coldRound(ctx, opts, c, env.KubeConfig, track, n, logf)
			if err != nil {
				return rep, fmt.Errorf("round %d: %w", n, err)
			}
			rep.Rounds = append(rep.Rounds, round)
		}
		rep.summariseRounds()
	}
	return rep, nil
}

var controllerLabel = map[string]string{"controller": core.ControllerName}

const reconcileTime = "controller_runtime_reconcile_time_seconds"

// apply creates every chain, parent first, with writers concurrent writers
// (a chain is written by one writer, in order), then each pod's status. It
// returns the roots' UIDs by AIBOM key and the number of writes.
func apply(ctx context.Context, c client.Client, load Load, writers int) (map[key]types.UID, int, error) {
	var (
		mu     sync.Mutex
		uids   = map[key]types.UID{}
		writes atomic.Int64
		wg     sync.WaitGroup
		errs   = make(chan error, writers)
		work   = make(chan int)
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				chain := load.Chains[i]
				created := make([]*unstructured.Unstructured, len(chain.Nodes))
				for j, n := range chain.Nodes {
					obj := n.Object.DeepCopy()
					if n.Parent >= 0 {
						p := created[n.Parent]
						t := true
						obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: p.GetAPIVersion(), Kind: p.GetKind(),
							Name: p.GetName(), UID: p.GetUID(), Controller: &t, BlockOwnerDeletion: &t}})
					}
					if err := c.Create(ctx, obj); err != nil {
						errs <- fmt.Errorf("create %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
						cancel()
						return
					}
					writes.Add(1)
					if n.Status != nil {
						obj.Object["status"] = n.Status
						if err := c.Status().Update(ctx, obj); err != nil {
							errs <- fmt.Errorf("status of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
							cancel()
							return
						}
						writes.Add(1)
					}
					created[j] = obj
				}
				mu.Lock()
				uids[key{chain.Namespace, chain.Root.AIBOMName()}] = created[0].GetUID()
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range load.Chains {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return uids, int(writes.Load()), err
	default:
	}
	return uids, int(writes.Load()), ctx.Err()
}

// parallel runs f(i) for i in [0, n) on writers goroutines, stopping at the
// first error.
func parallel(ctx context.Context, n, writers int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		work  = make(chan int)
	)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

func annotateRoots(ctx context.Context, c client.Client, load Load, writers int) error {
	return parallel(ctx, len(load.Chains), writers, func(ctx context.Context, i int) error {
		root := load.Chains[i].Nodes[0].Object
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(root.GroupVersionKind())
		obj.SetNamespace(load.Chains[i].Namespace)
		obj.SetName(root.GetName())
		patch := []byte(`{"metadata":{"annotations":{"` + touchAnnotation + `":"1"}}}`)
		if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("annotate %s %s/%s: %w", root.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		return nil
	})
}

// watchAIBOMs feeds the tracker from an informer on AIBOMs (the harness's
// own client; its requests are not the controller's).
func watchAIBOMs(ctx context.Context, cfg *rest.Config, scheme *k8sruntime.Scheme, t *tracker) error {
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	inf, err := ca.GetInformer(ctx, &v1alpha1.AIBOM{})
	if err != nil {
		return err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if a, ok := obj.(*v1alpha1.AIBOM); ok {
				t.observe(a)
			}
		},
		UpdateFunc: func(_, obj any) {
			if a, ok := obj.(*v1alpha1.AIBOM); ok {
				t.observe(a)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if a, ok := obj.(*v1alpha1.AIBOM); ok {
				t.forget(a)
			}
		},
	}); err != nil {
		return err
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		return errors.New("AIBOM watch did not sync")
	}
	return nil
}

// controllerProcess is the running controller binary.
type controllerProcess struct {
	cmd        *exec.Cmd
	logPath    string
	logFile    *os.File
	metricsURL string
	readyURL   string
	pprofURL   string
	started    time.Time
	readyAt    atomic.Int64 // nanoseconds after started; 0 until ready
	exited     chan struct{}
	exitErr    error
	stopOnce   sync.Once
}

func startController(opts Options, kubeconfig []byte, logName string) (*controllerProcess, error) {
	kc := filepath.Join(opts.WorkDir, "kubeconfig")
	if err := os.WriteFile(kc, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	probeAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	// Plain HTTP on loopback: the harness scrapes without a token, and the
	// TokenReviews and SubjectAccessReviews of secure serving would land in
	// the API request counts it measures.
	args := []string{"--kubeconfig", kc, "--adapters", "all",
		"--metrics-bind-address", metricsAddr, "--metrics-secure=false", "--health-probe-bind-address", probeAddr,
		// Millisecond timestamps: the log shows where the start-up goes.
		"--zap-time-encoding=rfc3339nano"}
	if opts.MaxConcurrentReconciles > 0 {
		args = append(args, fmt.Sprintf("--max-concurrent-reconciles=%d", opts.MaxConcurrentReconciles))
	}
	if opts.DiscoveryInterval > 0 {
		args = append(args, "--discovery-interval="+opts.DiscoveryInterval.String())
	}
	if opts.ResyncInterval != 0 {
		args = append(args, "--resync-interval="+opts.ResyncInterval.String())
	}
	var pprofURL string
	if opts.HeapProfile != "" || opts.CPUProfile != "" || opts.Toggle {
		pprofAddr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		args = append(args, "--pprof-bind-address", pprofAddr)
		pprofURL = "http://" + pprofAddr + "/debug/pprof/"
	}
	p := &controllerProcess{
		pprofURL:   pprofURL,
		logPath:    filepath.Join(opts.WorkDir, logName),
		metricsURL: "http://" + metricsAddr + "/metrics",
		readyURL:   "http://" + probeAddr + "/readyz",
		exited:     make(chan struct{}),
	}
	if p.logFile, err = os.Create(p.logPath); err != nil {
		return nil, err
	}
	p.cmd = exec.Command(opts.Controller, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.logFile, p.logFile
	p.cmd.Env = controllerEnv(os.Environ(), opts)
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		p.logFile.Close()
		return nil, fmt.Errorf("start %s: %w", opts.Controller, err)
	}
	go func() {
		p.exitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// controllerEnv is the harness's environment with the Go runtime settings
// of opts: those of the options replace inherited ones, and an inherited
// GOMEMLIMIT or GOGC is dropped when the option is unset, so that a run
// measures what its options say.
func controllerEnv(base []string, opts Options) []string {
	out := make([]string, 0, len(base)+2)
	for _, kv := range base {
		if strings.HasPrefix(kv, "GOMEMLIMIT=") || strings.HasPrefix(kv, "GOGC=") {
			continue
		}
		out = append(out, kv)
	}
	if opts.GoMemLimit != "" {
		out = append(out, "GOMEMLIMIT="+opts.GoMemLimit)
	}
	if opts.GoGC != "" {
		out = append(out, "GOGC="+opts.GoGC)
	}
	return out
}

// saveHeapProfile writes the controller's heap profile, taken after a GC,
// to path.
func saveHeapProfile(ctx context.Context, pprofURL, path string) error {
	return saveProfile(ctx, pprofURL+"heap?gc=1", path)
}

// saveProfile writes the profile a pprof URL serves to path.
func saveProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile: %w", err)
	}
	return f.Close()
}

// profileAPIServer starts the API server's CPU profile for
// opts.CPUProfileSeconds into opts.APIServerProfile+suffix, when asked for;
// the function returned waits for it and says where it went.
func profileAPIServer(ctx context.Context, cfg *rest.Config, opts Options, suffix string) func() error {
	if opts.APIServerProfile == "" {
		return func() error { return nil }
	}
	path := opts.APIServerProfile + suffix
	done := make(chan error, 1)
	go func() {
		raw, err := apiServerGet(ctx, cfg, "/debug/pprof/profile", "seconds", strconv.Itoa(opts.CPUProfileSeconds))
		if err != nil {
			done <- fmt.Errorf("API server profile: %w", err)
			return
		}
		done <- os.WriteFile(path, raw, 0o644)
	}()
	return func() error {
		if err := <-done; err != nil {
			return err
		}
		fmt.Fprintf(opts.Log, "scale: API server CPU profile written to %s\n", path)
		return nil
	}
}

// stop sends SIGTERM and waits (SIGKILL after 30s).
func (p *controllerProcess) stop() {
	p.stopOnce.Do(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		p.logFile.Close()
	})
}

func (p *controllerProcess) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("controller exited: %v; see %s", p.exitErr, p.logPath)
	default:
		return nil
	}
}

// waitReady polls /readyz until it answers 200.
func (p *controllerProcess) waitReady(ctx context.Context) {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.readyURL, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.readyAt.Store(int64(time.Since(p.started)))
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-p.exited:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *controllerProcess) readySeconds() float64 {
	return time.Duration(p.readyAt.Load()).Seconds()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitConverged(ctx context.Context, opts Options, t *tracker, p *controllerProcess, logf func(string, ...any)) error {
	deadline := time.After(opts.Timeout)
	tick := time.NewTicker(opts.Poll)
	defer tick.Stop()
	lastLog := time.Now()
	for {
		select {
		case <-t.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			_, wrong, extra, reasons := t.state(10)
			return fmt.Errorf("AIBOMs not correct after %s: %d wrong or missing, %d extra: %s; see %s", opts.Timeout, wrong, extra, strings.Join(reasons, "; "), p.logPath)
		case <-tick.C:
			if err := p.alive(); err != nil {
				return err
			}
			if time.Since(lastLog) >= 5*time.Second {
				_, wrong, extra, _ := t.state(0)
				logf("%.0fs: %d AIBOMs wrong or missing, %d extra", time.Since(p.started).Seconds(), wrong, extra)
				lastLog = time.Now()
			}
		}
	}
}

// settle scrapes until the controller's queue is empty, no worker is busy
// and the reconcile count has not moved for three scrapes (1.5s).
func settle(ctx context.Context, opts Options, p *controllerProcess) (Metrics, error) {
	deadline := time.Now().Add(opts.Timeout)
	stable, last := 0, -1.0
	for {
		if err := p.alive(); err != nil {
			return nil, err
		}
		m, err := scrape(ctx, p.metricsURL)
		if err != nil {
			return nil, err
		}
		total := m.Sum("controller_runtime_reconcile_total", controllerLabel)
		busy := m.Sum("workqueue_depth", map[string]string{"name": core.ControllerName}) +
			m.Sum("controller_runtime_active_workers", controllerLabel)
		if busy == 0 && total == last {
			stable++
		} else {
			stable = 0
		}
		if stable >= 3 {
			return m, nil
		}
		last = total
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("controller still busy after %s", opts.Timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// waitReconciles waits until at least n reconciles ran since before, then
// until the controller settles.
func waitReconciles(ctx context.Context, opts Options, p *controllerProcess, before Metrics, n int) (Metrics, error) {
	base := before.Sum("controller_runtime_reconcile_total", controllerLabel)
	deadline := time.Now().Add(opts.Timeout)
	for {
		if err := p.alive(); err != nil {
			return nil, err
		}
		m, err := scrape(ctx, p.metricsURL)
		if err != nil {
			return nil, err
		}
		if m.Sum("controller_runtime_reconcile_total", controllerLabel)-base >= float64(n) {
			return settle(ctx, opts, p)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%.0f of %d reconciles after %s", m.Sum("controller_runtime_reconcile_total", controllerLabel)-base, n, opts.Timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
}

// replay re-issues the controller's cold-start writes as the controller
// issued them, and times them: for every AIBOM, a create of a copy (same
// namespace, the name prefixed with "replay-", the same labels, owner
// references and spec) and a status merge patch carrying the whole status,
// document included, answered as metadata only. What the API server does for
// a write depends on the object's metadata as well as its size (the managed
// fields of the owner references and labels are tracked on every write), so
// a copy without them would time cheaper writes than the controller's. The
// request bodies are prepared before the clock starts: the time is the API
// server's, not the harness's.
func replay(ctx context.Context, c client.Client, plan replayPlan, writers int) (*Replay, error) {
	writes := plan.writes
	cpuBefore, cpuErr := TakeCPUSnapshot(cpuProcesses)
	start := time.Now()
	err := parallel(ctx, len(writes), writers, func(ctx context.Context, i int) error {
		w := writes[i]
		if err := c.Create(ctx, w.create); err != nil {
			return fmt.Errorf("replay create %s/%s: %w", w.create.Namespace, w.create.Name, err)
		}
		answer := &metav1.PartialObjectMetadata{}
		answer.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("AIBOM"))
		answer.SetNamespace(w.create.Namespace)
		answer.SetName(w.create.Name)
		if err := c.Status().Patch(ctx, answer, client.RawPatch(types.MergePatchType, w.status)); err != nil {
			return fmt.Errorf("replay status %s/%s: %w", w.create.Namespace, w.create.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r := &Replay{Writes: 2 * len(writes), Writers: writers, Seconds: time.Since(start).Seconds(), OriginalsDeleted: plan.deleted}
	if cpuAfter, err := TakeCPUSnapshot(cpuProcesses); err == nil && cpuErr == nil {
		use := cpuAfter.Since(cpuBefore, r.Seconds)
		r.CPU = &use
	}
	r.WritesPerSecond = float64(r.Writes) / r.Seconds
	return r, nil
}

// replayPlan is what the replay writes, prepared before its clock starts.
type replayPlan struct {
	writes  []replayWrite
	deleted int // the controller's AIBOMs deleted first
}

// prepareReplay lists the controller's AIBOMs, prepares their copies'
// writes and deletes the originals (deleteAIBOMs).
func prepareReplay(ctx context.Context, c client.Client, track *tracker) (replayPlan, error) {
	var list v1alpha1.AIBOMList
	if err := c.List(ctx, &list); err != nil {
		return replayPlan{}, err
	}
	writes, err := replayWrites(list.Items)
	if err != nil {
		return replayPlan{}, err
	}
	if err := deleteAIBOMs(ctx, c, track, list.Items); err != nil {
		return replayPlan{}, fmt.Errorf("replay: %w", err)
	}
	return replayPlan{writes: writes, deleted: len(list.Items)}, nil
}

// deleteAIBOMs deletes aiboms (deleteOriginals) and waits until the
// harness's own AIBOM watch has taken the deletes in too, so that the next
// phase starts from none.
func deleteAIBOMs(ctx context.Context, c client.Client, track *tracker, aiboms []v1alpha1.AIBOM) error {
	if err := deleteOriginals(ctx, c, aiboms); err != nil {
		return err
	}
	return waitTrackerEmpty(ctx, track)
}

// deleteOriginalsTimeout bounds the wait for the deleted AIBOMs to go.
const deleteOriginalsTimeout = 2 * time.Minute

// deleteOriginals removes the controller's AIBOMs before their copies are
// written, and waits until the API server lists none of them: the replay
// then starts from the state the cold start started from (none of these
// AIBOMs stored), not with a second set of documents stored and cached,
// which made each replayed write dearer than the controller's at 10,000
// roots.
func deleteOriginals(ctx context.Context, c client.Client, aiboms []v1alpha1.AIBOM) error {
	namespaces := sets.New[string]()
	for i := range aiboms {
		namespaces.Insert(aiboms[i].Namespace)
	}
	for _, ns := range sets.List(namespaces) {
		if err := c.DeleteAllOf(ctx, &v1alpha1.AIBOM{}, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("replay: deleting the controller's AIBOMs in %s: %w", ns, err)
		}
	}
	var left metav1.PartialObjectMetadataList
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, deleteOriginalsTimeout, true, func(ctx context.Context) (bool, error) {
		left = metav1.PartialObjectMetadataList{}
		left.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("AIBOMList"))
		if err := c.List(ctx, &left, client.Limit(1)); err != nil {
			return false, fmt.Errorf("replay: listing the AIBOMs left: %w", err)
		}
		return len(left.Items) == 0, nil
	})
	if err != nil && len(left.Items) > 0 {
		return fmt.Errorf("replay: AIBOM %s/%s still listed after the controller's AIBOMs were deleted (a finalizer?): %w", left.Items[0].Namespace, left.Items[0].Name, err)
	}
	return err
}

// replayWrite is one AIBOM's replayed create and status merge patch.
type replayWrite struct {
	create *v1alpha1.AIBOM
	status []byte
}

// replayPrefix names the replay's copies beside the originals.
const replayPrefix = "replay-"

// replayWrites prepares the replay of the controller's AIBOMs: for each, the
// copy to create (what the controller's create carried: labels, owner
// references, spec) and the status patch (the whole status, as the
// controller's first status patch of a new AIBOM carries it).
func replayWrites(aiboms []v1alpha1.AIBOM) ([]replayWrite, error) {
	out := make([]replayWrite, 0, len(aiboms))
	for i := range aiboms {
		src := &aiboms[i]
		name := replayPrefix + src.Name
		if len(name) > validation.DNS1123SubdomainMaxLength {
			return nil, fmt.Errorf("replay: AIBOM %s/%s: the copy's name would exceed %d characters", src.Namespace, src.Name, validation.DNS1123SubdomainMaxLength)
		}
		status, err := json.Marshal(map[string]any{"status": src.Status})
		if err != nil {
			return nil, fmt.Errorf("replay: status of %s/%s: %w", src.Namespace, src.Name, err)
		}
		out = append(out, replayWrite{
			create: &v1alpha1.AIBOM{
				ObjectMeta: metav1.ObjectMeta{
					Namespace:       src.Namespace,
					Name:            name,
					Labels:          maps.Clone(src.Labels),
					Annotations:     maps.Clone(src.Annotations),
					OwnerReferences: slices.Clone(src.OwnerReferences),
				},
				Spec: *src.Spec.DeepCopy(),
			},
			status: status,
		})
	}
	return out, nil
}

func diff(later, earlier map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range later {
		if d := v - earlier[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// IsWrite reports whether a "VERB resource" key is a write: a mutating
// verb on a stored resource. A POST of a review (selfsubjectaccessreviews:
// the supervisor asking whether it may watch a kind) stores nothing and is
// a read.
func IsWrite(k string) bool {
	verb, resource, _ := strings.Cut(k, " ")
	if strings.HasSuffix(resource, "reviews") {
		return false
	}
	switch verb {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func countWrites(requests map[string]int) int {
	n := 0
	for k, v := range requests {
		if IsWrite(k) {
			n += v
		}
	}
	return n
}

func outcomes(m, before Metrics) map[string]int {
	out := map[string]int{}
	for _, s := range m {
		if s.Name == "aibom_workload_reconcile_outcomes_total" {
			out[s.Labels["outcome"]] += int(s.Value)
		}
	}
	for _, s := range before {
		if s.Name == "aibom_workload_reconcile_outcomes_total" {
			out[s.Labels["outcome"]] -= int(s.Value)
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

func latency(b []Bucket) Latency {
	l := Latency{P50: Quantile(0.5, b), P99: Quantile(0.99, b)}
	if len(b) > 0 {
		l.Count = int(b[len(b)-1].Count)
	}
	if math.IsNaN(l.P50) || math.IsNaN(l.P99) { // no reconcile: JSON has no NaN
		l.P50, l.P99 = 0, 0
	}
	return l
}

func machine() Machine {
	return Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadAverageStart: loadAverage()}
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
