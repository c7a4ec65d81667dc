package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/internal/adapterinfo"
	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/internal/scan"
	"github.com/aibom-dev/aibom/internal/version"
	"github.com/aibom-dev/aibom/pkg/adapter/profile"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

// DefaultMaxDocumentBytes is the controller's default inline cap.
const DefaultMaxDocumentBytes = 512 * 1024

// adapterFlags choose the adapters, as on the controller. registry is the
// one place the registry of a command is built: a new source of adapters
// is a new field and a few lines there.
type adapterFlags struct {
	adapters  string
	plugins   []string
	pluginDir string
	profiles  []string
}

func (f *adapterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.adapters, "adapters", "all", "Comma-separated compiled-in adapters (Go adapters and shipped profiles) to enable ("+strings.Join(intree.Names(), ", ")+"), or \"all\".")
	fs.StringArrayVar(&f.plugins, "adapter-plugin", nil, "Path of an out-of-tree adapter binary to load, as the controller does (PATH@sha256:<hex> pins its SHA-256); repeatable.")
	fs.StringVar(&f.pluginDir, "adapter-plugin-dir", "", "Directory whose executables are loaded as adapter plugins, as the controller does.")
	fs.StringArrayVar(&f.profiles, "adapter-profile", nil, "A declarative adapter (AIBOMAdapterProfile YAML) file, or a folder of them, to load, as the controller does; repeatable.")
}

// registry builds the registry of the enabled adapters; close stops the
// plugin processes it started. Any error is a usage error.
func (f *adapterFlags) registry() (reg *graph.Registry, close func(), err error) {
	loaded, close, err := f.load()
	if err != nil {
		return nil, close, err
	}
	reg, err = adapterinfo.Registry(loaded)
	if err != nil {
		close()
		return nil, func() {}, fmt.Errorf("adapters: %w", err)
	}
	return reg, close, nil
}

// load starts and loads the enabled adapters, each marked with where it
// comes from (for "aibom adapters").
func (f *adapterFlags) load() (loaded []adapterinfo.Loaded, close func(), err error) {
	enabled, err := intree.Select(f.adapters)
	if err != nil {
		return nil, func() {}, fmt.Errorf("--adapters: %w", err)
	}
	loaded = adapterinfo.InTree(enabled...)
	for _, p := range f.profiles {
		profiles, err := profile.Load(p)
		if err != nil {
			return nil, func() {}, fmt.Errorf("--adapter-profile: %w", err)
		}
		loaded = append(loaded, adapterinfo.Profiles(profiles...)...)
	}
	plugins, closePlugins, err := scan.OpenPlugins(f.plugins, f.pluginDir)
	if err != nil {
		return nil, func() {}, err
	}
	for _, p := range plugins {
		l := adapterinfo.Loaded{Adapter: p, Source: adapterinfo.SourcePlugin}
		if c, ok := p.(interface{ Path() string }); ok {
			l.Path = c.Path()
		}
		loaded = append(loaded, l)
	}
	return loaded, closePlugins, nil
}

// inputFlags say what is read: manifests (-f, positional paths) or a
// cluster.
type inputFlags struct {
	files           []string
	recursive       bool
	namespace       string
	allNamespaces   bool
	kubeconfig      string
	kubeContext     string
	requireOptIn    bool
	ignoreOptIn     bool
	allowDuplicates bool
	strict          bool
	maxFileBytes    int64
	maxInputBytes   int64
	progress        string
}

func (f *inputFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVarP(&f.files, "filename", "f", nil, "File or directory of manifests, \"-\" for standard input; repeatable, and paths may also be given as arguments. Without any, a cluster is read.")
	fs.BoolVarP(&f.recursive, "recursive", "R", false, "With -f: read directories recursively.")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "Namespace: with -f, the namespace of objects without one (default \"default\"); with a cluster, the namespace to read (default: the context's).")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "Read every namespace of the cluster.")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster to read (default: $KUBECONFIG, ~/.kube/config, in-cluster).")
	fs.StringVar(&f.kubeContext, "context", "", "Kubeconfig context to use.")
	fs.BoolVar(&f.requireOptIn, "require-opt-in", false, "With -f: report only namespaces whose Namespace object in the input carries aibom.dev/enabled=true.")
	fs.BoolVar(&f.ignoreOptIn, "ignore-opt-in", false, "With a cluster: read namespaces that did not opt in too.")
	fs.BoolVar(&f.allowDuplicates, "allow-duplicates", false, "With -f: keep the last of the same object read twice from one file instead of failing (exit code 3).")
	fs.BoolVar(&f.strict, "strict", false, "With -f: fail (exit code 3) when the same object is read from two files, instead of keeping the later one with a warning.")
	fs.Int64Var(&f.maxFileBytes, "max-file-bytes", manifest.DefaultLimits.MaxFileBytes, "With -f: the largest manifest file read; a larger one, or anything but a regular file, is skipped as unreadable.")
	fs.Int64Var(&f.maxInputBytes, "max-input-bytes", manifest.DefaultLimits.MaxTotalBytes, "With -f: the most bytes read from all files together.")
	fs.StringVar(&f.progress, "progress", "auto", "With a cluster: print a line per kind listed to stderr: auto (when stderr is a terminal), always or never.")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagDirname("adapter-plugin-dir")
	_ = cmd.RegisterFlagCompletionFunc("progress", fixed("auto", "always", "never"))
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(&f.kubeconfig, &f.kubeContext))
}

// completionTimeout bounds the cluster request of a completion: a shell
// waits for it at every <Tab>.
const completionTimeout = 3 * time.Second

// completeNamespaces completes -n with the namespaces of the cluster that
// --kubeconfig and --context (as typed so far) name. Without a kubeconfig,
// or a cluster that does not answer in time or refuses the list, it
// offers nothing, quietly: completion never fails a shell. Only names that
// are valid namespace names are offered (a server's answer is no reason
// to write other text into a command line).
func completeNamespaces(kubeconfig, kubeContext *string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, _, err := scan.RESTConfig(*kubeconfig, *kubeContext)
		if err != nil {
			cobra.CompDebugln("namespaces: "+err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		ctx, cancel := context.WithTimeout(ctx, completionTimeout)
		defer cancel()
		cfg.Timeout = completionTimeout
		names, err := scan.Namespaces(ctx, cfg, 0)
		if err != nil {
			cobra.CompDebugln("namespaces: "+err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range names {
			if strings.HasPrefix(n, prefix) && len(validation.IsDNS1123Label(n)) == 0 {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// fixed completes a flag with a fixed list of values.
func fixed(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// manifestArgs completes positional arguments with manifests.
func manifestArgs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml", "json"}, cobra.ShellCompDirectiveFilterFileExt
}

// check refuses flags that do not fit where the input comes from.
func (f *inputFlags) check() error {
	if f.progress != "auto" && f.progress != "always" && f.progress != "never" {
		return fmt.Errorf("--progress must be auto, always or never, not %q", f.progress)
	}
	if f.fromFiles() {
		switch {
		case f.kubeconfig != "" || f.kubeContext != "":
			return errors.New("-f reads manifests; --kubeconfig and --context read a cluster: give one or the other")
		case f.allNamespaces:
			return errors.New("--all-namespaces reads a cluster; with -f every namespace of the input is reported")
		case f.ignoreOptIn:
			return errors.New("--ignore-opt-in is for a cluster; with -f the opt-in label is ignored unless --require-opt-in")
		case f.allowDuplicates && f.strict:
			return errors.New("give --allow-duplicates or --strict, not both")
		}
		return nil
	}
	switch {
	case f.requireOptIn:
		return errors.New("--require-opt-in is for -f; a cluster's opt-in label is always honoured unless --ignore-opt-in")
	case f.allowDuplicates:
		return errors.New("--allow-duplicates is for -f")
	case f.strict:
		return errors.New("--strict is for -f")
	case f.recursive:
		return errors.New("--recursive is for -f")
	case f.allNamespaces && f.namespace != "":
		return errors.New("give -n or --all-namespaces, not both")
	}
	return nil
}

func (f *inputFlags) fromFiles() bool { return len(f.files) > 0 }

// evaluation is what a command computed from its input.
type evaluation struct {
	reg   *graph.Registry
	snap  *scan.Snapshot
	store *graph.MemoryStore
	roots []scan.Root
	// unmatched are the roots with no AI signal that --report ai left out.
	unmatched []scan.Root
	// partial is set when something was skipped or could not be computed
	// (each named on stderr).
	partial bool
}

// evalOptions tune evaluate.
type evalOptions struct {
	// report is "ai" (roots with an AI signal) or "all".
	report      string
	maxDocBytes int
	// unused also reports referenced objects no root uses (scan.Options).
	unused bool
}

// evaluate reads the input (manifests or a cluster), prints what the
// loader noticed on stderr (notes, warnings, skipped files) and computes
// every root's report. An error is an *exitError.
func (f *inputFlags) evaluate(ctx context.Context, s Streams, reg *graph.Registry, opts evalOptions) (*evaluation, error) {
	var snap *scan.Snapshot
	var err error
	if f.fromFiles() {
		snap, err = scan.LoadFiles(reg, scan.FileOptions{Paths: f.files, Recursive: f.recursive, Stdin: s.In, Namespace: f.namespace,
			AllowDuplicates: f.allowDuplicates, Strict: f.strict,
			Limits: manifest.Limits{MaxFileBytes: f.maxFileBytes, MaxTotalBytes: f.maxInputBytes}})
		var dup *scan.DuplicateError
		if errors.As(err, &dup) {
			return nil, &exitError{code: ExitDuplicate, err: err}
		}
	} else {
		cfg, ctxNS, cfgErr := scan.RESTConfig(f.kubeconfig, f.kubeContext)
		if cfgErr != nil {
			return nil, fail(ExitInput, "kubeconfig: %v", cfgErr)
		}
		ns := f.namespace
		if ns == "" {
			ns = ctxNS
		}
		snap, err = scan.SnapshotCluster(ctx, cfg, reg, scan.ClusterOptions{Namespace: ns, AllNamespaces: f.allNamespaces, IgnoreOptIn: f.ignoreOptIn,
			Progress: progressWriter(f.progress, s.Err)})
	}
	if err != nil {
		return nil, &exitError{code: ExitInput, err: err}
	}
	// What the loader says quotes the input: escaped for the terminal.
	for _, n := range snap.Notes {
		fmt.Fprintln(s.Err, "note:", scan.Printable(n))
	}
	for _, w := range snap.Warnings {
		fmt.Fprintln(s.Err, "warning:", scan.Printable(w))
	}
	for _, e := range snap.Errors {
		fmt.Fprintln(s.Err, "error:", scan.Printable(e))
	}
	if snap.NothingRead {
		return nil, fail(ExitInput, "nothing could be read: every input was skipped (named above)")
	}

	ev := &evaluation{reg: reg, snap: snap, store: graph.NewMemoryStore(snap.Objects), partial: snap.Partial}
	sopts := scan.Options{Tool: document.Tool{Name: document.ToolName, Version: version.Version}, MaxDocumentBytes: opts.maxDocBytes, Unused: opts.unused}
	if f.fromFiles() && f.requireOptIn {
		sopts.Namespace = func(ns string) bool { return snap.NamespaceLabels[ns][graph.OptInLabel] == "true" }
	}
	ev.roots, err = scan.Evaluate(ctx, reg, ev.store, sopts)
	if err != nil {
		return nil, &exitError{code: ExitInput, err: err}
	}
	if cov, err := reconcile.PodCoverage(ctx, reg, ev.store, sopts.Namespace, true); err == nil {
		for _, line := range coverageNotes(cov) {
			fmt.Fprintln(s.Err, "note:", scan.Printable(line))
		}
	}
	if opts.report == "ai" {
		var unmatched []string
		ev.roots, ev.unmatched, unmatched = matchedRoots(ev.roots)
		if len(unmatched) > 0 {
			fmt.Fprintf(s.Err, "note: %d root(s) with no AI signal were not reported (--report=all reports them): %s\n", len(unmatched), strings.Join(unmatched, ", "))
		}
	}
	if f.fromFiles() && f.requireOptIn {
		if skipped := notOptedIn(ctx, reg, ev.store, snap); len(skipped) > 0 {
			fmt.Fprintf(s.Err, "note: --require-opt-in: namespace(s) without %s=true in the input were not reported: %s\n", graph.OptInLabel, strings.Join(skipped, ", "))
		}
	}
	var generic []string
	for _, r := range ev.roots {
		if r.Generic {
			generic = append(generic, r.Entry.Kind.String()+" "+objectName(r))
		}
	}
	if len(generic) > 0 {
		fmt.Fprintf(s.Err, "note: %d generic root(s) reported (a kind no adapter knows, a Pod nobody controls), read generically; a profile for their kinds would make them precise: %s\n", len(generic), strings.Join(generic, ", "))
	}
	var unused []string
	for _, r := range ev.roots {
		if r.Unused {
			unused = append(unused, r.Entry.Kind.Kind+"/"+objectName(r))
		}
	}
	if len(unused) > 0 {
		fmt.Fprintf(s.Err, "note: %d referenced object(s) that no root of the input uses are reported for what they define; nothing runs them (--unused-references=false leaves them out): %s\n", len(unused), strings.Join(unused, ", "))
	}
	for _, r := range ev.roots {
		if err := r.Err(); err != nil {
			fmt.Fprintf(s.Err, "error: %s %s: %s\n", r.Entry.Kind.String(), objectName(r), scan.Printable(err.Error()))
			ev.partial = true
		}
		if t := r.Report.Truncated; t != nil && t.Status == "True" {
			fmt.Fprintf(s.Err, "note: %s %s: %s\n", r.Entry.Kind.String(), objectName(r), scan.Printable(t.Message))
		}
	}
	return ev, nil
}

// progressWriter is stderr when progress lines are wanted.
func progressWriter(mode string, stderr io.Writer) io.Writer {
	switch mode {
	case "always":
		return stderr
	case "never":
		return nil
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return stderr
	}
	return nil
}

func objectName(r scan.Root) string {
	if ns := r.Object.GetNamespace(); ns != "" {
		return scan.Printable(ns + "/" + r.Object.GetName())
	}
	return scan.Printable(r.Object.GetName())
}

// notOptedIn lists the namespaces holding tracked objects that
// --require-opt-in left out.
func notOptedIn(ctx context.Context, reg *graph.Registry, store graph.Store, snap *scan.Snapshot) []string {
	seen := map[string]bool{}
	for _, e := range reg.TrackedEntries() {
		objs, _ := store.InNamespace(ctx, e, "")
		for _, o := range objs {
			if snap.NamespaceLabels[o.GetNamespace()][graph.OptInLabel] != "true" {
				seen[o.GetNamespace()] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// matchedRoots keeps the roots that show an AI signal, returns the others,
// and names them ("Deployment.apps default/web"), at most 20 of them.
func matchedRoots(roots []scan.Root) (kept, dropped []scan.Root, unmatched []string) {
	for _, r := range roots {
		if !r.Report.Unmatched {
			kept = append(kept, r)
			continue
		}
		dropped = append(dropped, r)
		if len(unmatched) == 20 {
			unmatched = append(unmatched, "...")
		}
		if len(unmatched) < 20 {
			unmatched = append(unmatched, r.Entry.Kind.String()+" "+objectName(r))
		}
	}
	return kept, dropped, unmatched
}

// coverageNotes says, per namespace, where the AI pods of the input are
// attributed, when some are not under a tracked root: under generic roots
// (an operator no adapter declares, a bare pod), or in no AIBOM at all
// (which should never happen: a broken ownership chain).
func coverageNotes(cov map[string]reconcile.Coverage) []string {
	var out []string
	for ns, c := range cov {
		if c[reconcile.AttributedGeneric] == 0 && c[reconcile.AttributedNone] == 0 {
			continue
		}
		total := c[reconcile.AttributedTracked] + c[reconcile.AttributedGeneric] + c[reconcile.AttributedNone]
		out = append(out, fmt.Sprintf("coverage in namespace %s: %d AI pod(s): %d under tracked roots, %d under generic roots, %d in no AIBOM",
			ns, total, c[reconcile.AttributedTracked], c[reconcile.AttributedGeneric], c[reconcile.AttributedNone]))
	}
	sort.Strings(out)
	return out
}
