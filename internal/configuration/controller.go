package configuration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/core/watch"
	"github.com/aibom-dev/aibom/pkg/sink"
)

// Options configure the configuration's runtime.
type Options struct {
	// Namespace is the controller's namespace: the only one Secrets are
	// read from.
	Namespace string
	// Defaults is the configuration of the flags, in force without an
	// AIBOMConfig.
	Defaults reconcile.Config
	// Delivery tunes the sinks' queues and retries.
	Delivery sink.Options
	// RedeliverInterval is how often AIBOMs whose document a sink does not
	// hold are offered again (default 1m).
	RedeliverInterval time.Duration
	// RefreshInterval is how often the AIBOMConfig is evaluated again even
	// unchanged, to pick up rotated Secrets (default 5m).
	RefreshInterval time.Duration
	// SkipNameValidation allows several managers in one process (tests).
	SkipNameValidation bool
	// APIServer lists the API server's addresses, refused as sink
	// destinations unless allowed (default: those of the manager's
	// rest.Config host and of $KUBERNETES_SERVICE_HOST).
	APIServer []netip.Addr
}

// apiServerAddrs resolves the addresses the controller reaches the API
// server at: its rest.Config host and the in-cluster service.
func apiServerAddrs(ctx context.Context, host string) []netip.Addr {
	var names []string
	if u, err := url.Parse(host); err == nil && u.Hostname() != "" {
		names = append(names, u.Hostname())
	}
	if h := os.Getenv("KUBERNETES_SERVICE_HOST"); h != "" {
		names = append(names, h)
	}
	var out []netip.Addr
	for _, n := range names {
		if a, err := netip.ParseAddr(n); err == nil {
			out = append(out, a.Unmap())
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", n)
		cancel()
		if err == nil {
			for _, a := range addrs {
				out = append(out, a.Unmap())
			}
		}
	}
	return out
}

// Runtime holds the sinks' machinery of one manager.
type Runtime struct {
	Hub        *Hub
	Dispatcher *sink.Dispatcher
	Status     *StatusWriter
	opts       Options
	log        logr.Logger
}

// New makes the sinks' machinery; pass Hub to core.Options.Sinks, then call
// Setup with what core.Setup returned.
func New(mgr manager.Manager, opts Options) *Runtime {
	if opts.RedeliverInterval <= 0 {
		opts.RedeliverInterval = time.Minute
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = 5 * time.Minute
	}
	log := mgr.GetLogger().WithName("sinks")
	if opts.APIServer == nil {
		opts.APIServer = apiServerAddrs(context.Background(), mgr.GetConfig().Host)
	}
	if opts.Delivery.Load == nil {
		opts.Delivery.Load = loadDocument(mgr.GetAPIReader())
	}
	rt := &Runtime{opts: opts, log: log}
	rt.Status = &StatusWriter{Client: mgr.GetClient(), Cache: mgr.GetCache(), API: mgr.GetAPIReader(), Log: log.WithName("status")}
	rt.Dispatcher = sink.NewDispatcher(opts.Delivery, rt.Status, log)
	rt.Hub = &Hub{Dispatcher: rt.Dispatcher}
	rt.Status.Sinks = rt.Hub
	return rt
}

// Setup reads the AIBOMConfig once before the manager starts (so that no
// reconcile ever runs on the flags when an object says otherwise), then
// adds the dispatcher, the status writer, the redelivery loop and the
// AIBOMConfig controller to the manager.
func (rt *Runtime) Setup(ctx context.Context, mgr manager.Manager, r *reconcile.Reconciler, sup *watch.Supervisor) (*Controller, error) {
	rc := reconcile.NewReconfigurer(r, sup)
	rt.Status.MaxInline = rc.Settings().MaxDocumentBytes
	c := &Controller{
		Client:    mgr.GetClient(),
		API:       mgr.GetAPIReader(),
		Secrets:   secretReader{reader: mgr.GetAPIReader(), namespace: rt.opts.Namespace},
		Core:      rc,
		Hub:       rt.Hub,
		Defaults:  rt.opts.Defaults,
		APIServer: rt.opts.APIServer,
		Refresh:   rt.opts.RefreshInterval,
		Elected:   mgr.Elected(),
		Log:       mgr.GetLogger().WithName("config"),
		redeliver: func(ctx context.Context) {
			r.Redeliver(ctx, rt.Hub.Names())
		},
	}
	if _, err := mgr.GetRESTMapper().RESTMapping(v1alpha1.GroupVersion.WithKind("AIBOMConfig").GroupKind(), v1alpha1.GroupVersion.Version); err != nil {
		// An upgrade that did not install the new CRD (Helm installs crds/
		// only on a first install): run on the flags rather than fail.
		c.Log.Error(err, "the AIBOMConfig API is not served; running on the flags, without sinks (install config/crd/bases/aibom.dev_aibomconfigs.yaml and restart)")
		return c, c.Core.Initialize(c.Defaults)
	}
	if err := c.initialize(ctx); err != nil {
		return nil, err
	}
	for _, run := range []manager.Runnable{rt.Dispatcher, rt.Status, manager.RunnableFunc(func(ctx context.Context) error {
		t := time.NewTicker(rt.opts.RedeliverInterval)
		defer t.Stop()
		// The first pass soon after the start: documents whose delivery a
		// restart interrupted or that had failed are offered again.
		first := time.After(2 * time.Second)
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-first:
			case <-t.C:
			}
			if n := r.Redeliver(ctx, rt.Hub.Names()); n > 0 {
				rt.log.Info("offering documents again to sinks that do not hold them", "aiboms", n)
			}
		}
	})} {
		if err := mgr.Add(run); err != nil {
			return nil, err
		}
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("aibomconfig").
		For(&v1alpha1.AIBOMConfig{}).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), SkipNameValidation: ptr.To(rt.opts.SkipNameValidation)}).
		Complete(c)
	return c, err
}

// Controller applies the AIBOMConfig named "default". It runs on every
// replica (each keeps its settings current, so that a new leader starts with
// them); only the leader writes the object's status.
type Controller struct {
	Client   client.Client
	API      client.Reader
	Secrets  secretReader
	Core     *reconcile.Reconfigurer
	Hub      *Hub
	Defaults reconcile.Config
	// APIServer lists the API server's addresses (sink.Destinations).
	APIServer []netip.Addr
	Refresh   time.Duration
	Elected   <-chan struct{}
	Log       logr.Logger

	redeliver func(context.Context)
	mu        sync.Mutex
	applied   int64 // generation in force; 0: the flags
}

// Applied returns the generation of the configuration in force (0: flags).
func (c *Controller) Applied() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied
}

func (c *Controller) initialize(ctx context.Context) error {
	obj := &v1alpha1.AIBOMConfig{}
	err := c.API.Get(ctx, client.ObjectKey{Name: v1alpha1.ConfigName}, obj)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return c.Core.Initialize(c.Defaults)
	}
	if err != nil {
		// The controller reconciles it once running; until then, flags.
		c.Log.Error(err, "reading the AIBOMConfig at start; starting on the flags")
		return c.Core.Initialize(c.Defaults)
	}
	cfg, sinks, _, err := c.evaluate(ctx, obj)
	if err == nil {
		err = c.Core.Initialize(cfg)
	}
	if err != nil {
		c.Log.Error(err, "the AIBOMConfig is refused; starting on the flags", "generation", obj.Generation)
		return c.Core.Initialize(c.Defaults)
	}
	c.Hub.SetSinks(sinks)
	c.applied = obj.Generation
	c.Log.Info("AIBOMConfig applied at start", "generation", obj.Generation, "sinks", c.Hub.Names())
	return nil
}

// evaluate turns the object into a core configuration and sinks; an error
// refuses it whole.
func (c *Controller) evaluate(ctx context.Context, obj *v1alpha1.AIBOMConfig) (reconcile.Config, []sink.Sink, []metav1.Condition, error) {
	cfg := c.Defaults
	if sel := obj.Spec.NamespaceSelector; sel != nil {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return cfg, nil, nil, fmt.Errorf("spec.namespaceSelector: %w", err)
		}
		cfg.NamespaceSelector = s
	}
	if len(obj.Spec.Adapters) > 0 {
		cfg.Adapters = slices.Clone(obj.Spec.Adapters)
		slices.Sort(cfg.Adapters)
	}
	if m := obj.Spec.MaxInlineDocumentBytes; m != nil {
		// A value stored before the minimum was raised to
		// document.MinMaxBytes is read as the minimum.
		cfg.MaxDocumentBytes = max(int(*m), document.MinMaxBytes)
	}
	sinks, conds, err := buildSinks(ctx, c.Secrets, obj.Spec, c.APIServer)
	return cfg, sinks, conds, err
}

// Reconcile implements ctrlreconcile.Reconciler.
func (c *Controller) Reconcile(ctx context.Context, req ctrlreconcile.Request) (ctrlreconcile.Result, error) {
	if req.Name != v1alpha1.ConfigName {
		return ctrlreconcile.Result{}, nil
	}
	obj := &v1alpha1.AIBOMConfig{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: v1alpha1.ConfigName}, obj); apierrors.IsNotFound(err) {
		return ctrlreconcile.Result{}, c.apply(ctx, c.Defaults, nil, 0)
	} else if err != nil {
		return ctrlreconcile.Result{}, err
	}
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: v1alpha1.ConfigReasonApplied,
		Message: fmt.Sprintf("generation %d runs", obj.Generation)}
	cfg, sinks, conds, err := c.evaluate(ctx, obj)
	if err == nil {
		err = c.apply(ctx, cfg, sinks, obj.Generation)
	}
	if err != nil {
		ready.Status, ready.Reason = metav1.ConditionFalse, v1alpha1.ConfigReasonInvalid
		running := "the flags"
		if g := c.Applied(); g > 0 {
			running = fmt.Sprintf("generation %d", g)
		}
		ready.Message = fmt.Sprintf("refused: %v; %s keeps running", err, running)
		c.Log.Info("AIBOMConfig refused; the last good configuration keeps running", "generation", obj.Generation, "error", err.Error())
	}
	if err := c.writeStatus(ctx, obj, ready, conds); err != nil {
		return ctrlreconcile.Result{}, err
	}
	return ctrlreconcile.Result{RequeueAfter: c.Refresh}, nil
}

func (c *Controller) apply(ctx context.Context, cfg reconcile.Config, sinks []sink.Sink, generation int64) error {
	if err := c.Core.Reconfigure(ctx, cfg); err != nil {
		return err
	}
	before := c.Hub.Names()
	c.Hub.SetSinks(sinks)
	c.mu.Lock()
	changed := c.applied != generation
	c.applied = generation
	c.mu.Unlock()
	if changed {
		c.Log.Info("configuration applied", "generation", generation, "namespaceSelector", cfg.NamespaceSelector.String(),
			"adapters", strings.Join(cfg.Adapters, ","), "maxInlineDocumentBytes", cfg.MaxDocumentBytes, "sinks", c.Hub.Names())
	}
	if !slices.Equal(before, c.Hub.Names()) && c.redeliver != nil {
		// A new sink gets the current documents.
		go c.redeliver(ctx)
	}
	return nil
}

func (c *Controller) leading() bool {
	select {
	case <-c.Elected:
		return true
	default:
		return false
	}
}

func (c *Controller) writeStatus(ctx context.Context, obj *v1alpha1.AIBOMConfig, ready metav1.Condition, sinkConds []metav1.Condition) error {
	if !c.leading() {
		return nil
	}
	base := obj.DeepCopy()
	st := &obj.Status
	st.ObservedGeneration = obj.Generation
	st.AppliedGeneration = c.Applied()
	keep := map[string]bool{"Ready": true}
	ready.ObservedGeneration = obj.Generation
	meta.SetStatusCondition(&st.Conditions, ready)
	for _, sc := range sinkConds {
		sc.ObservedGeneration = obj.Generation
		keep[sc.Type] = true
		meta.SetStatusCondition(&st.Conditions, sc)
	}
	for _, cond := range slices.Clone(st.Conditions) {
		if !keep[cond.Type] && strings.HasPrefix(cond.Type, v1alpha1.SinkConditionPrefix) {
			meta.RemoveStatusCondition(&st.Conditions, cond.Type)
		}
	}
	if err := c.Client.Status().Patch(ctx, obj, client.MergeFrom(base)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("write AIBOMConfig status: %w", err)
	}
	return nil
}

// loadDocument reads an AIBOM's document again from the API server (the
// cache holds AIBOMs without documents) for an event its queue held as a
// reference: ErrDocumentChanged unless status.document is still the
// document of that SHA-256.
func loadDocument(api client.Reader) func(context.Context, types.NamespacedName, string) ([]byte, error) {
	return func(ctx context.Context, key types.NamespacedName, sha string) ([]byte, error) {
		a := &v1alpha1.AIBOM{}
		if err := api.Get(ctx, key, a); apierrors.IsNotFound(err) {
			return nil, sink.ErrDocumentChanged
		} else if err != nil {
			return nil, err
		}
		doc := []byte(a.Status.Document)
		sum := sha256.Sum256(doc)
		if a.Status.DocumentSHA256 != sha || hex.EncodeToString(sum[:]) != sha {
			return nil, sink.ErrDocumentChanged
		}
		return doc, nil
	}
}
