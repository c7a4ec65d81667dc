// Command controller runs the AIBOM controller: it keeps one AI Bill of
// Materials (CycloneDX 1.6) per AI workload in every namespace labelled
// aibom.dev/enabled=true.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/adapterinfo"
	"github.com/aibom-dev/aibom/internal/apimetrics"
	"github.com/aibom-dev/aibom/internal/configuration"
	"github.com/aibom-dev/aibom/internal/metricsauth"
	"github.com/aibom-dev/aibom/internal/profileloader"
	"github.com/aibom-dev/aibom/internal/readiness"
	"github.com/aibom-dev/aibom/internal/version"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
	"github.com/aibom-dev/aibom/pkg/adapter/profile"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/core/watch"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "aibom-controller:", err)
		os.Exit(1)
	}
}

// maxInlineDocument is the largest inline cap --max-document-bytes accepts:
// a document of that size, the capped absorbed list and the rest of the
// AIBOM stay well under etcd's 1.5 MiB object limit.
const maxInlineDocument = 1 << 20

func run() error {
	var (
		adapters          string
		metricsAddr       string
		metricsSecure     bool
		metricsCertDir    string
		probeAddr         string
		pprofAddr         string
		leaderElect       bool
		leaderElectNS     string
		maxDocBytes       int
		report            string
		concurrency       int
		discoveryInterval time.Duration
		watchDeadline     time.Duration
		readinessInterval time.Duration
		resyncInterval    time.Duration
		danglingGrace     time.Duration
		showVersion       bool
		listAdapters      listFormat
		zapOpts           = zap.Options{Development: false}
		pluginPaths       pluginList
		profilePaths      profileList
		clusterProfiles   bool
		profileGrace      time.Duration
		pluginDir         string
		pluginMaxResponse int
		pluginCallTimeout time.Duration
		sinkFlags         sinkOptions
	)
	flag.StringVar(&adapters, "adapters", "all", "Comma-separated compiled-in adapters (Go adapters and shipped profiles) to enable ("+strings.Join(intree.Names(), ", ")+"), or \"all\".")
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	flag.BoolVar(&metricsSecure, "metrics-secure", true, "Serve metrics over HTTPS to clients the API server authenticates (TokenReview) and authorizes (SubjectAccessReview, get on the non-resource URL /metrics); false serves plain, unauthenticated HTTP.")
	flag.StringVar(&metricsCertDir, "metrics-cert-dir", "", "Directory with tls.crt and tls.key for the metrics endpoint (reloaded on change); empty: a self-signed certificate generated in memory at start.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz endpoints bind to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0", "Address the Go profiling endpoints (/debug/pprof/, e.g. heap) bind to; \"0\" disables them. Bind it to a loopback address: the profiles are not authenticated.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader through a Lease so that only one replica writes AIBOMs.")
	flag.StringVar(&leaderElectNS, "leader-election-namespace", "", "Namespace of the leader-election Lease (default: the pod's namespace).")
	flag.IntVar(&maxDocBytes, "max-document-bytes", 512*1024, "Inline cap of a document (at most 1 MiB); larger documents drop their lowest-value components and say so.")
	flag.StringVar(&report, "report", "ai", "Which roots get an AIBOM: \"ai\" (those with an AI signal anywhere in their roll-up: the root, a workload it absorbed or a pod it runs names a runtime, a model, model storage, an evaluation or training framework, or an accelerator) or \"all\" (every root in an opted-in namespace).")
	flag.IntVar(&concurrency, "max-concurrent-reconciles", core.DefaultMaxConcurrentReconciles, "How many workloads are reconciled in parallel. The client has no rate limit of its own: the API server's priority and fairness paces it.")
	flag.DurationVar(&discoveryInterval, "discovery-interval", 30*time.Second, "How often to re-discover which adapter kinds the cluster serves and probe the kinds read live, only while something needs polling (CRDs cannot be watched, a discovery failed, a kind may be listed but not watched); otherwise a CRD change triggers discovery and nothing is polled.")
	flag.DurationVar(&watchDeadline, "watch-progress-deadline", watch.DefaultWatchProgressDeadline, "How long a watch may deliver neither an event nor a bookmark (the API server sends one about every minute or two) before it is restarted from its last resource version; a negative value disables the check.")
	flag.DurationVar(&readinessInterval, "readiness-check-interval", 30*time.Second, "How long /readyz reuses its verdict on the AIBOM API and the controller's permissions (one discovery request and one SelfSubjectAccessReview per required permission per check).")
	flag.DurationVar(&resyncInterval, "resync-interval", reconcile.DefaultResyncInterval, "How often every root is re-verified against the caches (the safety net for lost events; writes only what changed); a negative value disables it.")
	flag.DurationVar(&danglingGrace, "dangling-owner-grace", reconcile.DefaultDanglingGrace, "How long a workload whose controller owner is gone (deleted, or re-created with another UID) while its ownerReference remains waits for the garbage collector, which deletes or orphans it, before it is reported on its own; its AIBOM, if any, is kept meanwhile. A negative value reports it at once.")
	flag.BoolVar(&showVersion, "version", false, "Print the version and exit.")
	flag.Var(&listAdapters, "list-adapters", "Build and validate the adapter registry exactly as a start would (failing as a start fails), print every adapter (core, in-tree, plugin, profile, with its path) with its kinds, roles and versions, and exit; --list-adapters=json prints JSON.")
	flag.Var(&profilePaths, "adapter-profile", "A declarative adapter (AIBOMAdapterProfile YAML) file, or a folder of them, to enable (repeatable). See docs/profiles.md.")
	flag.DurationVar(&profileGrace, "adapter-profile-removal-grace", profileloader.DefaultRemovalGrace, "After the AIBOMAdapterProfile that tracked a kind is deleted, how long until its AIBOMs are re-verified; meanwhile, and after, an object of the kind that tops its chain keeps its AIBOM as a generic root, with the workloads it absorbed still absorbed.")
	flag.BoolVar(&clusterProfiles, "cluster-profiles", true, "Load declarative adapters from AIBOMAdapterProfile objects in the cluster, and reload them on every change, without a restart.")
	flag.Var(&pluginPaths, "adapter-plugin", "Path of an out-of-tree adapter plugin binary to start and enable (repeatable); PATH@sha256:<hex> also pins the binary's SHA-256. See docs/plugins.md.")
	flag.StringVar(&pluginDir, "adapter-plugin-dir", "", "Directory whose executable files are adapter plugins to start and enable, in name order.")
	flag.IntVar(&pluginMaxResponse, "adapter-plugin-max-response-bytes", plugin.DefaultMaxResponseBytes, fmt.Sprintf("Largest response accepted from an adapter plugin, in bytes (at most %d); a larger one fails that scrape unread.", plugin.MaxMessageBytes))
	flag.DurationVar(&pluginCallTimeout, "adapter-plugin-call-timeout", plugin.DefaultScrapeTimeout, "Deadline of each call to an adapter plugin; a plugin that has not answered by then is killed and restarted after a backoff.")
	sinkFlags.bind(flag.CommandLine)
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()

	if showVersion {
		fmt.Println("aibom-controller", version.Version)
		return nil
	}
	// The document lives inline in the AIBOM's status, next to the absorbed
	// list; etcd refuses objects over about 1.5 MiB.
	if report != "ai" && report != "all" {
		return fmt.Errorf("--report=%q: must be \"ai\" or \"all\"", report)
	}
	if maxDocBytes < document.MinMaxBytes || maxDocBytes > maxInlineDocument {
		return fmt.Errorf("--max-document-bytes=%d: must be between %d (the smallest cap every workload's document fits) and %d (so that the AIBOM object stays under etcd's object size limit)", maxDocBytes, document.MinMaxBytes, maxInlineDocument)
	}
	enabled, err := intree.Select(adapters)
	if err != nil {
		return fmt.Errorf("--adapters: %w", err)
	}
	// Out-of-tree adapters join the registry like in-tree ones, under the
	// plugin's own name; a kind claimed twice fails NewRegistry, naming both.
	defer plugin.CleanupClients()
	if pluginMaxResponse < 1024 || pluginMaxResponse > plugin.MaxMessageBytes || pluginCallTimeout <= 0 {
		return fmt.Errorf("--adapter-plugin-max-response-bytes must be between 1024 and %d, --adapter-plugin-call-timeout positive", plugin.MaxMessageBytes)
	}
	plugins, err := openPlugins(pluginPaths, pluginDir, plugin.MaxResponseBytes(pluginMaxResponse), plugin.ScrapeTimeout(pluginCallTimeout))
	if err != nil {
		return err
	}
	loaded := append(adapterinfo.InTree(enabled...), adapterinfo.Plugins(plugins...)...)
	for _, p := range profilePaths {
		profiles, err := profile.Load(p)
		if err != nil {
			return fmt.Errorf("--adapter-profile: %w", err)
		}
		loaded = append(loaded, adapterinfo.Profiles(profiles...)...)
	}
	// The listing is a dry run: the same registry, refused the same way.
	registry, err := adapterinfo.Registry(loaded)
	if err != nil {
		return err
	}
	if listAdapters != "" {
		return adapterinfo.Write(os.Stdout, adapterinfo.List(registry, loaded), string(listAdapters))
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	logger := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	// Count every API request (aibom_api_requests_total): the manager's
	// client and caches, and the supervisor's per-kind caches, discovery and
	// probes, all build their HTTP clients from this config.
	apimetrics.Default.Instrument(cfg)
	metricsOpts := metricsserver.Options{BindAddress: metricsAddr}
	if metricsSecure {
		metricsOpts.SecureServing = true
		metricsOpts.CertDir = metricsCertDir
		metricsOpts.FilterProvider = metricsauth.FilterProvider
		// HTTP/1.1 only: HTTP/2's stream handling has had denial-of-service
		// flaws (CVE-2023-44487, CVE-2023-39325), and a scrape needs nothing
		// HTTP/2 offers.
		metricsOpts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   core.CacheOptions(cfg),
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  probeAddr,
		PprofBindAddress:        pprofAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "aibom-controller.aibom.dev",
		LeaderElectionNamespace: leaderElectNS,
		// A leader that is stopped (rollout, SIGTERM) hands the Lease over
		// at once instead of leaving it to expire: the process exits right
		// after the manager stops, and only the leader writes.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	// The AIBOMConfig and its sinks (flags are the defaults without it).
	live := configuration.New(mgr, sinkFlags.options(maxDocBytes, enabled))
	r, sup, err := core.Setup(ctx, mgr, core.Options{
		Sinks:                   live.Hub,
		Registry:                registry,
		Tool:                    document.Tool{Name: document.ToolName, Version: version.Version},
		MaxDocumentBytes:        maxDocBytes,
		ReportAll:               report == "all",
		MaxConcurrentReconciles: concurrency,
		DiscoveryInterval:       discoveryInterval,
		WatchProgressDeadline:   watchDeadline,
		ResyncInterval:          resyncInterval,
		DanglingOwnerGrace:      danglingGrace,
	})
	if err != nil {
		return err
	}
	if _, err := live.Setup(ctx, mgr, r, sup); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if clusterProfiles {
		if _, err := profileloader.Setup(mgr, &profileloader.Loader{
			Client: mgr.GetClient(), Registry: registry, Static: adapterinfo.Adapters(loaded), Watches: sup, Roots: r,
			Log: ctrl.Log.WithName("adapter-profiles"), RemovalGrace: profileGrace,
		}); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("informers-synced", func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return fmt.Errorf("informer caches not synced yet")
		}
		// Ready once every served kind's watch was started; a kind whose
		// watch fails is reported by aibom_watch_healthy, not by readiness.
		if !sup.FirstPassDone() {
			return fmt.Errorf("kind discovery not done yet")
		}
		return nil
	}); err != nil {
		return err
	}
	// Ready also means able to do the job: the AIBOM API is served and the
	// controller still holds the permissions every document needs.
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("aibom-api-and-permissions", (&readiness.Checker{
		Discovery:    discoveryClient,
		Reviews:      clientset.AuthorizationV1().SelfSubjectAccessReviews(),
		GroupVersion: v1alpha1.GroupVersion.String(),
		Resource:     "aiboms",
		Interval:     readinessInterval,
		Log:          ctrl.Log.WithName("readiness"),
	}).Check); err != nil {
		return err
	}
	var kinds []string
	for _, e := range registry.AllEntries() {
		kinds = append(kinds, e.Kind.String()+"("+string(e.Role)+")")
	}
	logger.Info("starting", "version", version.Version, "adapters", adapters, "kinds", kinds)
	return mgr.Start(ctx)
}

// profileList is the repeatable --adapter-profile flag.
type profileList []string

func (l *profileList) String() string { return strings.Join(*l, ",") }

func (l *profileList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty path")
	}
	*l = append(*l, v)
	return nil
}

// pluginList is the repeatable --adapter-plugin flag.
type pluginList []string

func (l *pluginList) String() string { return strings.Join(*l, ",") }

func (l *pluginList) Set(v string) error {
	if v == "" {
		return fmt.Errorf("empty path")
	}
	if _, _, err := plugin.SplitChecksum(v); err != nil {
		return err
	}
	*l = append(*l, v)
	return nil
}

// listFormat is the --list-adapters flag: empty (do not list), "text"
// (the flag alone) or "json".
type listFormat string

func (f *listFormat) String() string { return string(*f) }

func (f *listFormat) Set(v string) error {
	switch v {
	case "true", adapterinfo.FormatText:
		*f = adapterinfo.FormatText
	case "false":
		*f = ""
	case adapterinfo.FormatJSON:
		*f = adapterinfo.FormatJSON
	default:
		return fmt.Errorf("%q: want text or json", v)
	}
	return nil
}

// IsBoolFlag lets --list-adapters stand alone (text).
func (f *listFormat) IsBoolFlag() bool { return true }

// openPlugins starts the plugins named by --adapter-plugin (PATH or
// PATH@sha256:<hex>), then those of --adapter-plugin-dir.
func openPlugins(args []string, dir string, opts ...plugin.Option) ([]*plugin.Client, error) {
	var out []*plugin.Client
	for _, arg := range args {
		c, err := plugin.OpenArg(arg, opts...)
		if err != nil {
			return nil, fmt.Errorf("--adapter-plugin: %w", err)
		}
		out = append(out, c)
	}
	if dir != "" {
		clients, err := plugin.OpenDir(dir, opts...)
		if err != nil {
			return nil, fmt.Errorf("--adapter-plugin-dir: %w", err)
		}
		out = append(out, clients...)
	}
	return out, nil
}
