package scan

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/internal/version"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/profile"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// Exit codes of the command line.
const (
	// ExitOK: every root was reported.
	ExitOK = 0
	// ExitInput: an input could not be read (a missing file, malformed
	// YAML or JSON, an object without apiVersion, kind or name, a cluster
	// that cannot be reached or whose namespaces cannot be read), or the
	// output could not be written. Nothing is printed on stdout.
	ExitInput = 1
	// ExitUsage: the command line is wrong (unknown command or flag, bad
	// flag value, conflicting flags, unknown adapter).
	ExitUsage = 2
	// ExitDuplicate: the same object (group, kind, namespace, name) was read
	// more than once, and --allow-duplicates was not given. Nothing is
	// printed on stdout; the message names every position.
	ExitDuplicate = 3
	// ExitPartial: the results are printed (and written), but are partial:
	// some root could not be scraped or its document not built (it has no
	// document; the error is on stderr), or the cluster refused to list a
	// kind.
	ExitPartial = 4
)

// DefaultMaxDocumentBytes is the controller's default inline cap.
const DefaultMaxDocumentBytes = 512 * 1024

const topUsage = `aibom: an AI Bill of Materials (CycloneDX 1.6) for every AI workload.

Usage:
  aibom scan [flags]     compute, offline, the documents the controller writes
  aibom adapters         list the compiled-in adapters with their kinds, roles and versions
  aibom version          print the version
  aibom help [command]   show help

Run "aibom scan -h" for the flags of scan.
`

const scanUsage = `Usage:
  aibom scan -f PATH [-f PATH ...] [flags]     from manifests (files or directories)
  aibom scan [-n NS | -A] [flags]              from a read-only snapshot of a cluster

scan computes, for every root workload (a tracked workload no other tracked
workload controls), exactly the CycloneDX document the controller writes
into its AIBOM's status.document.

From manifests (-f): multi-document YAML and JSON, "kind: List" too; a
directory gives its *.yaml, *.yml and *.json files (not recursively).
Objects without a namespace go to "default" (or -n); objects without a UID
get a stable synthetic one; ownerReferences may name their owner by kind
and name only (no uid) and are resolved within the input. Namespaces need
not opt in unless --require-opt-in.

From a cluster (no -f): every registered kind the cluster serves is listed
(pages of 500), in the namespace of -n (default: the context's) or in every
namespace with -A; only namespaces labelled aibom.dev/enabled=true are read
unless --ignore-opt-in. Nothing is written to the cluster.

Output: --output table (default) prints one line per root; --output json
prints the document itself when there is exactly one root, else a JSON
array of documents (none: []). --out-dir DIR also writes one
<aibom-name>.cdx.json per root.

Out-of-tree adapters (--adapter-plugin, --adapter-plugin-dir) are started
and spoken to exactly as the controller does; a plugin that does not start
is a usage error naming it.

Exit codes: 0 success; 1 unreadable input (file:line in the message) or
output; 2 usage error; 3 duplicate objects (without --allow-duplicates);
4 partial results (printed, but some root has no document or some kind
could not be listed). Notes (kinds no adapter knows, owners not in the
input, kinds not served) go to stderr and do not change the exit code.

Flags:
`

const adaptersUsage = `Usage: aibom adapters [flags]

Lists the in-tree adapters compiled in, with the kinds each declares, their
roles and the versions they read (preferred first).

Flags:
`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// Run is the command line: args without the program name. It returns the
// exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return ExitUsage
	}
	switch args[0] {
	case "scan":
		return runScan(ctx, args[1:], stdout, stderr)
	case "adapters":
		return runAdapters(args[1:], stdout, stderr)
	case "version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			return Run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, topUsage)
		return ExitOK
	}
	fmt.Fprintf(stderr, "aibom: unknown command %q\n\n%s", args[0], topUsage)
	return ExitUsage
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The flag package prints the usage on every error; parse prints it
	// itself, to stdout, on -h only.
	fs.Usage = func() {}
	return fs
}

// parse parses flags; it returns -1 to go on, or the exit code. On -h it
// prints usage and the flags to stdout.
func parse(fs *flag.FlagSet, usage string, args []string, stdout io.Writer) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return ExitOK
		}
		fmt.Fprintf(fs.Output(), "Run \"aibom %s -h\" for help.\n", fs.Name())
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "aibom %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return ExitUsage
	}
	return -1
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", stderr)
	if code := parse(fs, "Usage: aibom version\n", args, stdout); code >= 0 {
		return code
	}
	fmt.Fprintf(stdout, "aibom %s (CycloneDX %s, adapter contract v%d)\n", version.Version, document.SpecVersion, adapter.ContractVersion)
	return ExitOK
}

func runAdapters(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("adapters", stderr)
	list := fs.String("adapters", "all", "Comma-separated adapters to list ("+strings.Join(intree.Names(), ", ")+"), or \"all\".")
	if code := parse(fs, adaptersUsage, args, stdout); code >= 0 {
		return code
	}
	enabled, err := intree.Select(*list)
	if err != nil {
		fmt.Fprintln(stderr, "aibom adapters: --adapters:", err)
		return ExitUsage
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ADAPTER\tKIND\tROLE\tVERSIONS")
	for _, a := range enabled {
		for _, k := range a.Kinds() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name(), k.String(), k.Role, strings.Join(k.Versions, ","))
		}
	}
	if err := tw.Flush(); err != nil {
		return ExitInput
	}
	return ExitOK
}

type scanFlags struct {
	files           stringList
	output          string
	outDir          string
	kubeconfig      string
	kubeContext     string
	namespace       string
	allNamespaces   bool
	requireOptIn    bool
	ignoreOptIn     bool
	allowDuplicates bool
	adapters        string
	plugins         stringList
	profiles        stringList
	unused          bool
	pluginDir       string
	maxDocBytes     int
	report          string
	maxFileBytes    int64
	maxInputBytes   int64
}

func runScan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f scanFlags
	fs := newFlagSet("scan", stderr)
	fs.Var(&f.files, "f", "File or directory of manifests; repeatable. Without -f, a cluster is read.")
	fs.Var(&f.files, "filename", "Same as -f.")
	fs.StringVar(&f.output, "output", "table", "Output on stdout: table, json, or cyclonedx-xml (one root's document as CycloneDX XML).")
	fs.StringVar(&f.output, "o", "table", "Same as --output.")
	fs.StringVar(&f.outDir, "out-dir", "", "Also write one <aibom-name>.cdx.json per root into this directory.")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster to read (default: $KUBECONFIG, ~/.kube/config, in-cluster).")
	fs.StringVar(&f.kubeContext, "context", "", "Kubeconfig context to use.")
	fs.StringVar(&f.namespace, "n", "", "Namespace: with -f, the namespace of objects without one (default \"default\"); with a cluster, the namespace to read (default: the context's).")
	fs.StringVar(&f.namespace, "namespace", "", "Same as -n.")
	fs.BoolVar(&f.allNamespaces, "all-namespaces", false, "Read every namespace of the cluster.")
	fs.BoolVar(&f.allNamespaces, "A", false, "Same as --all-namespaces.")
	fs.BoolVar(&f.requireOptIn, "require-opt-in", false, "With -f: report only namespaces whose Namespace object in the input carries aibom.dev/enabled=true.")
	fs.BoolVar(&f.ignoreOptIn, "ignore-opt-in", false, "With a cluster: read namespaces that did not opt in too.")
	fs.BoolVar(&f.allowDuplicates, "allow-duplicates", false, "With -f: keep the last of objects read twice instead of failing (exit code 3).")
	fs.StringVar(&f.adapters, "adapters", "all", "Comma-separated compiled-in adapters (Go adapters and shipped profiles) to enable ("+strings.Join(intree.Names(), ", ")+"), or \"all\".")
	fs.Var(&f.plugins, "adapter-plugin", "Path of an out-of-tree adapter binary to load, as the controller does; repeatable.")
	fs.BoolVar(&f.unused, "unused-references", true, "Also report objects of referenced kinds (serving runtimes, model catalogue entries) that no root of the input refers to, marked \"not used\": what they define, though nothing runs them. The controller never reports them.")
	fs.Var(&f.profiles, "adapter-profile", "A declarative adapter (AIBOMAdapterProfile YAML) file, or a folder of them, to load, as the controller does; repeatable.")
	fs.StringVar(&f.pluginDir, "adapter-plugin-dir", "", "Directory whose executables are loaded as adapter plugins, as the controller does.")
	fs.Int64Var(&f.maxFileBytes, "max-file-bytes", manifest.DefaultLimits.MaxFileBytes, "With -f: the largest manifest file read; a larger one, or anything but a regular file, is an input error.")
	fs.Int64Var(&f.maxInputBytes, "max-input-bytes", manifest.DefaultLimits.MaxTotalBytes, "With -f: the most bytes read from all files together.")
	fs.StringVar(&f.report, "report", "ai", "Which roots are reported, as on the controller: \"ai\" (those with an AI signal: a runtime, a model, model storage, an evaluation or training framework, or an accelerator) or \"all\".")
	fs.IntVar(&f.maxDocBytes, "max-document-bytes", DefaultMaxDocumentBytes, "Inline cap of a document, as on the controller; larger documents drop their lowest-value components and say so.")
	if code := parse(fs, scanUsage, args, stdout); code >= 0 {
		return code
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "aibom scan: "+format+"\n", a...)
		return ExitUsage
	}
	if f.output != "table" && f.output != "json" && f.output != "cyclonedx-xml" {
		return usage("--output must be table, json or cyclonedx-xml, not %q", f.output)
	}
	if f.maxDocBytes < 0 {
		return usage("--max-document-bytes must not be negative")
	}
	if f.report != "ai" && f.report != "all" {
		return usage("--report must be ai or all, not %q", f.report)
	}
	fromFiles := len(f.files) > 0
	if fromFiles {
		switch {
		case f.kubeconfig != "" || f.kubeContext != "":
			return usage("-f reads manifests; --kubeconfig and --context read a cluster: give one or the other")
		case f.allNamespaces:
			return usage("--all-namespaces reads a cluster; with -f every namespace of the input is reported")
		case f.ignoreOptIn:
			return usage("--ignore-opt-in is for a cluster; with -f the opt-in label is ignored unless --require-opt-in")
		}
	} else {
		switch {
		case f.requireOptIn:
			return usage("--require-opt-in is for -f; a cluster's opt-in label is always honoured unless --ignore-opt-in")
		case f.allowDuplicates:
			return usage("--allow-duplicates is for -f")
		case f.allNamespaces && f.namespace != "":
			return usage("give -n or --all-namespaces, not both")
		}
	}
	enabled, err := intree.Select(f.adapters)
	if err != nil {
		return usage("--adapters: %v", err)
	}
	plugins, closePlugins, err := openPlugins(f.plugins, f.pluginDir)
	if err != nil {
		return usage("%v", err)
	}
	defer closePlugins()
	enabled = append(enabled, plugins...)
	for _, p := range f.profiles {
		loaded, err := profile.Load(p)
		if err != nil {
			return usage("--adapter-profile: %v", err)
		}
		for _, a := range loaded {
			enabled = append(enabled, a)
		}
	}
	reg, err := core.NewRegistry(enabled...)
	if err != nil {
		return usage("adapters: %v", err)
	}

	var snap *Snapshot
	if fromFiles {
		snap, err = LoadFiles(reg, FileOptions{Paths: f.files, Namespace: f.namespace, AllowDuplicates: f.allowDuplicates,
			Limits: manifest.Limits{MaxFileBytes: f.maxFileBytes, MaxTotalBytes: f.maxInputBytes}})
		var dup *DuplicateError
		if errors.As(err, &dup) {
			fmt.Fprintln(stderr, "aibom scan:", err)
			return ExitDuplicate
		}
	} else {
		cfg, ctxNS, cfgErr := RESTConfig(f.kubeconfig, f.kubeContext)
		if cfgErr != nil {
			fmt.Fprintln(stderr, "aibom scan: kubeconfig:", cfgErr)
			return ExitInput
		}
		ns := f.namespace
		if ns == "" {
			ns = ctxNS
		}
		snap, err = SnapshotCluster(ctx, cfg, reg, ClusterOptions{Namespace: ns, AllNamespaces: f.allNamespaces, IgnoreOptIn: f.ignoreOptIn, Progress: stderr})
	}
	if err != nil {
		fmt.Fprintln(stderr, "aibom scan:", err)
		return ExitInput
	}
	for _, n := range snap.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}

	opts := Options{Tool: document.Tool{Name: document.ToolName, Version: version.Version}, MaxDocumentBytes: f.maxDocBytes, Unused: f.unused}
	if fromFiles && f.requireOptIn {
		opts.Namespace = func(ns string) bool { return optedIn(snap.NamespaceLabels[ns]) }
	}
	roots, err := Evaluate(ctx, reg, core.NewMemoryStore(snap.Objects), opts)
	if err != nil {
		fmt.Fprintln(stderr, "aibom scan:", err)
		return ExitInput
	}
	if f.report == "ai" {
		var unmatched []string
		roots, unmatched = matchedRoots(roots)
		if len(unmatched) > 0 {
			fmt.Fprintf(stderr, "note: %d root(s) with no AI signal were not reported (--report=all reports them): %s\n", len(unmatched), strings.Join(unmatched, ", "))
		}
	}
	if fromFiles && f.requireOptIn {
		if skipped := notOptedIn(ctx, reg, snap); len(skipped) > 0 {
			fmt.Fprintf(stderr, "note: --require-opt-in: namespace(s) without %s=true in the input were not reported: %s\n", core.OptInLabel, strings.Join(skipped, ", "))
		}
	}

	var unused []string
	for _, r := range roots {
		if r.Unused {
			unused = append(unused, r.Entry.Kind.Kind+"/"+objectName(r.Object.GetNamespace(), r.Object.GetName()))
		}
	}
	if len(unused) > 0 {
		fmt.Fprintf(stderr, "note: %d referenced object(s) that no root of the input uses are reported for what they define; nothing runs them (--unused-references=false leaves them out): %s\n", len(unused), Printable(strings.Join(unused, ", ")))
	}

	code := ExitOK
	if snap.Partial {
		code = ExitPartial
	}
	for _, r := range roots {
		if err := r.Err(); err != nil {
			fmt.Fprintf(stderr, "error: %s %s: %v\n", r.Entry.Kind.String(), objectName(r.Object.GetNamespace(), r.Object.GetName()), err)
			code = ExitPartial
		}
		if t := r.Report.Truncated; t != nil && t.Status == "True" {
			fmt.Fprintf(stderr, "note: %s %s: %s\n", r.Entry.Kind.String(), objectName(r.Object.GetNamespace(), r.Object.GetName()), t.Message)
		}
	}
	if f.outDir != "" {
		if _, err := WriteDir(f.outDir, roots); err != nil {
			fmt.Fprintln(stderr, "aibom scan: --out-dir:", err)
			return ExitInput
		}
	}
	switch f.output {
	case "json":
		err = WriteJSON(stdout, roots)
	case "cyclonedx-xml":
		err = WriteXML(stdout, roots)
	default:
		err = WriteTable(stdout, roots)
	}
	if err != nil {
		fmt.Fprintln(stderr, "aibom scan:", err)
		return ExitInput
	}
	return code
}

// notOptedIn lists the namespaces holding tracked objects that
// --require-opt-in left out.
func notOptedIn(ctx context.Context, reg *core.Registry, snap *Snapshot) []string {
	store := core.NewMemoryStore(snap.Objects)
	seen := map[string]bool{}
	for _, e := range reg.TrackedEntries() {
		objs, _ := store.InNamespace(ctx, e, "")
		for _, o := range objs {
			if !optedIn(snap.NamespaceLabels[o.GetNamespace()]) {
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

// matchedRoots keeps the roots that show an AI signal, and names the others
// ("Deployment.apps default/web"), at most 20 of them.
func matchedRoots(roots []Root) (kept []Root, unmatched []string) {
	for _, r := range roots {
		if !r.Report.Unmatched {
			kept = append(kept, r)
			continue
		}
		if len(unmatched) == 20 {
			unmatched = append(unmatched, "...")
		}
		if len(unmatched) < 20 {
			unmatched = append(unmatched, r.Entry.Kind.String()+" "+objectName(r.Object.GetNamespace(), r.Object.GetName()))
		}
	}
	return kept, unmatched
}
