package scan

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// PageSize is the Limit of every list request; Continue tokens page on. A
// variable so that tests can make pages small.
var PageSize int64 = 500

// ClusterOptions tune SnapshotCluster.
type ClusterOptions struct {
	// Namespace is the namespace to read; ignored with AllNamespaces.
	Namespace string
	// AllNamespaces reads every namespace.
	AllNamespaces bool
	// IgnoreOptIn reads namespaces that did not opt in too.
	IgnoreOptIn bool
	// Progress receives a line per kind listed (objects and pages) and a
	// closing count; nil prints nothing. The command line gives stderr when
	// it is a terminal.
	Progress io.Writer
}

// RESTConfig loads a kubeconfig the way kubectl does (the file given, else
// $KUBECONFIG, else ~/.kube/config, else in-cluster), with an optional
// context. It also returns the context's namespace ("default" when unset).
func RESTConfig(kubeconfig, context string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	return cfg, ns, nil
}

// SnapshotCluster reads, without writing anything, every object of every
// registered kind the cluster serves in the namespaces to scan: the
// namespace named, or every namespace, keeping only those labelled
// aibom.dev/enabled=true unless IgnoreOptIn. It negotiates each kind's
// version like the controller (the adapter's most preferred version the
// cluster serves; reg is updated) and skips kinds the cluster does not
// serve, with a note. Lists are paged (Limit PageSize). Tracked kinds and
// Pods are read whole, other kinds as metadata only, as the controller's
// caches do. A kind the cluster refuses to list is a note and makes the
// snapshot Partial; failing to reach the cluster or to read the namespaces
// is an error.
func SnapshotCluster(ctx context.Context, cfg *rest.Config, reg *graph.Registry, opts ClusterOptions) (*Snapshot, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = "aibom-scan"
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{NamespaceLabels: map[string]map[string]string{}}

	// Namespaces to read, and whether each opted in.
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	var namespaces []string
	if opts.AllNamespaces {
		items, _, err := listAll(ctx, func(lo metav1.ListOptions) ([]client.Object, string, error) {
			l, err := meta.Resource(nsGVR).List(ctx, lo)
			if err != nil {
				return nil, "", err
			}
			out := make([]client.Object, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out, l.Continue, nil
		})
		if err != nil && !(opts.IgnoreOptIn && apierrors.IsForbidden(err)) {
			return nil, fmt.Errorf("list namespaces: %w%s", err, optInHint(opts, err))
		}
		for _, n := range items {
			snap.NamespaceLabels[n.GetName()] = n.GetLabels()
			namespaces = append(namespaces, n.GetName())
		}
	} else {
		n, err := meta.Resource(nsGVR).Get(ctx, opts.Namespace, metav1.GetOptions{})
		switch {
		case err == nil:
			snap.NamespaceLabels[n.GetName()] = n.GetLabels()
		case opts.IgnoreOptIn && apierrors.IsForbidden(err):
		default:
			return nil, fmt.Errorf("get namespace %s: %w%s", opts.Namespace, err, optInHint(opts, err))
		}
		namespaces = []string{opts.Namespace}
	}
	scan := map[string]bool{}
	var skipped []string
	for _, n := range namespaces {
		if opts.IgnoreOptIn || optedIn(snap.NamespaceLabels[n]) {
			scan[n] = true
		} else {
			skipped = append(skipped, n)
		}
	}
	if len(skipped) > 0 {
		sort.Strings(skipped)
		snap.Notes = append(snap.Notes, fmt.Sprintf("%d namespace(s) did not opt in (label %s=true) and were not read (--ignore-opt-in reads them): %s",
			len(skipped), graph.OptInLabel, strings.Join(skipped, ", ")))
	}
	if len(scan) == 0 {
		return snap, nil
	}

	// Version negotiation, as the controller's supervisor does it.
	served := &graph.ServedVersions{Discovery: disc}
	var entries []graph.Entry
	var unserved []string
	for _, e := range reg.AllEntries() {
		v, ok, err := served.Preferred(e)
		if err != nil {
			return nil, err
		}
		if !ok {
			unserved = append(unserved, fmt.Sprintf("%s (%s)", e.Kind.String(), strings.Join(e.Versions, ", ")))
			continue
		}
		if err := reg.SetServedVersion(e.GroupKind(), v); err != nil {
			return nil, err
		}
		e.Version = v
		entries = append(entries, e)
	}

	if len(unserved) > 0 {
		snap.Notes = append(snap.Notes, fmt.Sprintf("%d kind(s) not served by the cluster in the versions their adapters read were skipped: %s", len(unserved), strings.Join(unserved, ", ")))
	}

	var lists []string // namespaces to list in; "" = all at once
	if opts.AllNamespaces {
		lists = []string{""}
	} else {
		lists = []string{opts.Namespace}
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "listing %d kinds in %d namespace(s)...\n", len(entries), len(scan))
	}
	count := 0
	for _, e := range entries {
		lists := lists
		if e.ClusterScoped {
			lists = []string{""} // a cluster-scoped referenced kind
		}
		for _, ns := range lists {
			objs, pages, err := listAll(ctx, func(lo metav1.ListOptions) ([]client.Object, string, error) {
				return listPage(ctx, dyn, meta, e, ns, lo)
			})
			if err != nil {
				if apierrors.IsNotFound(err) {
					snap.Notes = append(snap.Notes, fmt.Sprintf("kind %s went away while listing; skipped", e.Kind.String()))
					continue
				}
				snap.Partial = true
				snap.Errors = append(snap.Errors, fmt.Sprintf("cannot list %s: %v; results are partial", e.Kind.String(), err))
				continue
			}
			kept := 0
			for _, o := range objs {
				if !scan[o.GetNamespace()] && !e.ClusterScoped {
					continue
				}
				o.GetObjectKind().SetGroupVersionKind(e.GVK())
				snap.Objects = append(snap.Objects, o)
				kept++
			}
			count += kept
			if opts.Progress != nil {
				where := "every namespace"
				if ns != "" {
					where = "namespace " + ns
				}
				fmt.Fprintf(opts.Progress, "listed %s in %s: %d object(s), %d page(s)\n", e.Kind.String(), where, kept, pages)
			}
		}
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "listed %d objects of %d kinds\n", count, len(entries))
	}
	return snap, nil
}

func optInHint(opts ClusterOptions, err error) string {
	if apierrors.IsForbidden(err) && !opts.IgnoreOptIn {
		return " (namespaces are read to honour the opt-in label; --ignore-opt-in skips that)"
	}
	return ""
}

// listPage lists one page of a kind: whole objects for the kinds the core
// reads whole, metadata otherwise.
func listPage(ctx context.Context, dyn dynamic.Interface, meta metadata.Interface, e graph.Entry, ns string, lo metav1.ListOptions) ([]client.Object, string, error) {
	gvr := e.GroupVersionResourceServed()
	if graph.NeedsFullObject(e) {
		l, err := dyn.Resource(gvr).Namespace(ns).List(ctx, lo)
		if err != nil {
			return nil, "", err
		}
		out := make([]client.Object, len(l.Items))
		for i := range l.Items {
			out[i] = &l.Items[i]
		}
		return out, l.GetContinue(), nil
	}
	l, err := meta.Resource(gvr).Namespace(ns).List(ctx, lo)
	if err != nil {
		return nil, "", err
	}
	out := make([]client.Object, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, l.Continue, nil
}

// listAll pages through a list, PageSize items at a time; it returns the
// number of pages read.
func listAll(ctx context.Context, page func(metav1.ListOptions) ([]client.Object, string, error)) ([]client.Object, int, error) {
	var out []client.Object
	lo := metav1.ListOptions{Limit: PageSize}
	for pages := 1; ; pages++ {
		if err := ctx.Err(); err != nil {
			return nil, pages - 1, err
		}
		items, cont, err := page(lo)
		if err != nil {
			return nil, pages, err
		}
		out = append(out, items...)
		if cont == "" {
			return out, pages, nil
		}
		lo.Continue = cont
	}
}

// Namespaces lists the names of the cluster's namespaces, sorted, for shell
// completion: one metadata-only list, at most limit names (0: no limit).
// The caller bounds the time with ctx.
func Namespaces(ctx context.Context, cfg *rest.Config, limit int64) ([]string, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = "aibom-completion"
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	l, err := meta.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(l.Items))
	for _, n := range l.Items {
		out = append(out, n.GetName())
	}
	sort.Strings(out)
	return out, nil
}
