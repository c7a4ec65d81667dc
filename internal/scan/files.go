package scan

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Snapshot is the set of objects a scan evaluates, with what the loader
// noticed about them.
type Snapshot struct {
	// Objects are every object read (kinds no adapter knows included).
	Objects []client.Object
	// NamespaceLabels holds the labels of the Namespace objects read, by
	// namespace name.
	NamespaceLabels map[string]map[string]string
	// Notes are remarks for stderr (unknown kinds, unresolved owners,
	// synthetic names, kinds not served ...), in order.
	Notes []string
	// Warnings are remarks a person should act on (an object read from two
	// files, the later one kept), in order.
	Warnings []string
	// Errors name what could not be read (a malformed file, skipped whole);
	// the snapshot holds everything else.
	Errors []string
	// Partial is set when something that should have been read could not
	// be (a file skipped, a kind the cluster refused to list).
	Partial bool
	// NothingRead is set when files were given and every one of them was
	// skipped (a device such as /dev/zero, a file over the limit, a
	// malformed one): there is no partial result, only nothing.
	NothingRead bool
}

// FileOptions tune LoadFiles.
type FileOptions struct {
	// Paths are files and directories (see manifest.ReadFiles); "-" is
	// standard input.
	Paths []string
	// Recursive walks directories recursively.
	Recursive bool
	// Stdin is read for the path "-" (os.Stdin when nil).
	Stdin io.Reader
	// Limits bound the input (manifest.DefaultLimits when zero).
	Limits manifest.Limits
	// Namespace is given to objects without one ("default" when empty).
	Namespace string
	// AllowDuplicates keeps the last of the same object read twice from
	// one file instead of failing.
	AllowDuplicates bool
	// Strict fails on the same object read from two files (by default the
	// later one is kept, with a warning).
	Strict bool
}

// DuplicateError reports objects read more than once where that is an
// error: twice from one file, or from two files with FileOptions.Strict.
type DuplicateError struct {
	// Duplicates has one line per duplicated object, naming every position.
	Duplicates []string
}

func (e *DuplicateError) Error() string {
	return "duplicate objects:\n  " + strings.Join(e.Duplicates, "\n  ")
}

// clusterScoped lists the well-known cluster-scoped kinds, which get no
// default namespace.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:        true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                       true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:               true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                 true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                              true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                    true,
	{Group: "grove.io", Kind: "ClusterTopologyBinding"}:                             true,
}

var namespaceGK = schema.GroupKind{Kind: "Namespace"}

// objectKey identifies an object of the input.
type objectKey struct {
	gk              schema.GroupKind
	namespace, name string
}

// LoadFiles reads manifests into a snapshot: objects without a namespace get
// opts.Namespace, objects with only metadata.generateName get a stable
// synthetic name (SyntheticName, with a note), objects without a UID get
// manifest.SyntheticUID, and ownerReferences that name their owner by kind
// and name are resolved within the files (manifest.ResolveOwners). Objects
// of kinds no adapter in reg knows are kept (they can be owners) and counted
// in a note.
//
// A file that cannot be read or decoded, or holds an object without a name,
// is skipped whole and named in Snapshot.Errors (the snapshot is Partial;
// NothingRead as well when every file was skipped).
// The same object (group, kind, namespace, name) read from two files is a
// warning, the later one kept, unless opts.Strict; read twice from one file
// it is a *DuplicateError unless opts.AllowDuplicates, which keeps the last.
// A path that does not exist, or input over the total limit, is an error.
func LoadFiles(reg *graph.Registry, opts FileOptions) (*Snapshot, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = "default"
	}
	generated := map[objectKey]bool{}
	// Each object is named and put in its held form as soon as it is
	// decoded: the decoded objects of a whole file are never held at once.
	held := map[*unstructured.Unstructured]*heldObject{}
	fileNotes := map[string][]string{}
	each := func(s manifest.Source) (manifest.Source, error) {
		if err := nameObject(s, ns, reg, generated, fileNotes); err != nil {
			return s, err
		}
		if h := hold(reg, s.Object); h != nil {
			held[&h.Unstructured] = h
			s.Object = &h.Unstructured
		}
		return s, nil
	}
	files, err := manifest.ReadFiles(manifest.ReadOptions{Limits: opts.Limits, Recursive: opts.Recursive, Stdin: opts.Stdin, Each: each}, opts.Paths...)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{NamespaceLabels: map[string]map[string]string{}}
	index := map[objectKey]int{} // key -> index in kept
	var kept []manifest.Source
	positions := map[objectKey][]manifest.Source{}
	var order []objectKey
	skipped := 0
	for _, f := range files {
		if f.Err == nil {
			snap.Notes = append(snap.Notes, fileNotes[f.Name]...)
		}
		if f.Err != nil {
			snap.Errors = append(snap.Errors, f.Err.Error()+"; file skipped")
			snap.Partial = true
			skipped++
			continue
		}
		for _, s := range f.Sources {
			o := s.Object
			k := objectKey{o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName()}
			if i, dup := index[k]; dup {
				if len(positions[k]) == 1 {
					order = append(order, k)
				}
				positions[k] = append(positions[k], s)
				kept[i] = s
				continue
			}
			positions[k] = []manifest.Source{s}
			index[k] = len(kept)
			kept = append(kept, s)
		}
	}
	snap.NothingRead = len(files) > 0 && skipped == len(files)
	var dups []string
	for _, k := range order {
		var where []string
		sameFile := false
		seenFile := map[string]bool{}
		for _, s := range positions[k] {
			where = append(where, s.Position())
			sameFile = sameFile || seenFile[s.File]
			seenFile[s.File] = true
		}
		line := Printable(fmt.Sprintf("%s %s at %s", kindString(k.gk), objectName(k.namespace, k.name), strings.Join(where, " and ")))
		switch {
		case sameFile && !opts.AllowDuplicates:
			dups = append(dups, line+" (twice in one file; --allow-duplicates keeps the last)")
		case !sameFile && opts.Strict:
			dups = append(dups, line+" (--strict)")
		default:
			snap.Warnings = append(snap.Warnings, "duplicate "+line+": the last one read is kept")
		}
	}
	if len(dups) > 0 {
		return nil, &DuplicateError{Duplicates: dups}
	}

	objs := make([]*unstructured.Unstructured, len(kept))
	where := map[*unstructured.Unstructured]manifest.Source{}
	unknown := map[string]int{}
	for i, s := range kept {
		objs[i] = s.Object
		where[s.Object] = s
		gvk := s.Object.GroupVersionKind()
		if gvk.GroupKind() == namespaceGK {
			snap.NamespaceLabels[s.Object.GetName()] = s.Object.GetLabels()
			continue
		}
		e, ok := reg.Lookup(gvk.GroupKind())
		if !ok {
			e, ok = reg.Referenced(gvk.GroupKind())
		}
		if !ok || e.Generic() {
			unknown[kindString(gvk.GroupKind())]++
			if !clusterScoped[gvk.GroupKind()] && s.Object.GetNamespace() != "" {
				// Read as the controller reads a kind it may watch: a
				// generic kind, walked through, its top a generic root.
				_ = reg.AddGenericKind(adapter.Kind{Group: gvk.Group, Kind: gvk.Kind, Resource: guessResource(gvk.Kind), Versions: []string{gvk.Version}})
			}
			continue
		}
		if !contains(e.Versions, gvk.Version) {
			snap.Notes = append(snap.Notes, fmt.Sprintf("%s: %s %s is in version %s, which adapter %q does not declare (it reads %s); scanned as is",
				s.Position(), kindString(gvk.GroupKind()), objectName(s.Object.GetNamespace(), s.Object.GetName()), gvk.Version, e.Adapter.Name(), strings.Join(e.Versions, ", ")))
		}
	}
	if len(unknown) > 0 {
		var parts []string
		n := 0
		for k, c := range unknown {
			parts = append(parts, fmt.Sprintf("%s (%d)", k, c))
			n += c
		}
		sort.Strings(parts)
		snap.Notes = append(snap.Notes, fmt.Sprintf("%d object(s) of kinds no enabled adapter knows were kept and read as generic roots where they own workloads or embed pod templates with an AI signal: %s", n, strings.Join(parts, ", ")))
	}
	for _, u := range manifest.ResolveOwners(objs) {
		s := where[u.Object]
		what := "ownerReference"
		if isController(u.Ref) {
			what = "controller ownerReference"
		}
		snap.Notes = append(snap.Notes, fmt.Sprintf("%s: %s %s: %s to %s %s names no object in the input; the ownership walk stops there",
			s.Position(), s.Object.GetKind(), objectName(s.Object.GetNamespace(), s.Object.GetName()), what, u.Ref.Kind, u.Ref.Name))
	}
	for _, o := range objs {
		if h, ok := held[o]; ok {
			snap.Objects = append(snap.Objects, h)
			continue
		}
		snap.Objects = append(snap.Objects, o)
	}
	return snap, nil
}

// nameObject gives an object read from a file its default namespace and,
// with only metadata.generateName, its synthetic name (noted under its
// file, in notes). An object with neither name is an error: its file is
// skipped.
func nameObject(s manifest.Source, ns string, reg *graph.Registry, generated map[objectKey]bool, notes map[string][]string) error {
	o := s.Object
	gk := o.GroupVersionKind().GroupKind()
	if o.GetNamespace() == "" && !clusterScoped[gk] && !clusterScopedReferenced(reg, gk) {
		o.SetNamespace(ns)
	}
	if o.GetName() != "" {
		return nil
	}
	if o.GetGenerateName() == "" {
		return fmt.Errorf("%s: %s without metadata.name or metadata.generateName", s.Position(), o.GetKind())
	}
	// The API server would add a random suffix; offline the suffix is
	// derived from the content, so the same input gives the same name.
	// Identical objects (two runs of the same Job) get distinct names.
	for n := 0; ; n++ {
		name := SyntheticName(o, n)
		k := objectKey{gk, o.GetNamespace(), name}
		if !generated[k] {
			generated[k] = true
			o.SetName(name)
			break
		}
	}
	notes[s.File] = append(notes[s.File], fmt.Sprintf("%s: %s has metadata.generateName %q and no name: named %s offline (stable, derived from its content)",
		s.Position(), o.GetKind(), Printable(o.GetGenerateName()), Printable(o.GetName())))
	return nil
}

// suffixAlphabet is the alphabet of the API server's generated suffixes
// (no vowels, no look-alike characters).
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// SyntheticName is the name an object with metadata.generateName gets
// offline: the prefix and five characters derived from the object's
// content (its JSON, keys sorted) and n, which tells identical objects
// apart.
func SyntheticName(o *unstructured.Unstructured, n int) string {
	data, _ := json.Marshal(o.Object) // maps marshal with sorted keys
	sum := sha256.Sum256(append(data, []byte(fmt.Sprintf("\x00%d", n))...))
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = suffixAlphabet[int(sum[i])%len(suffixAlphabet)]
	}
	return o.GetGenerateName() + string(suffix)
}

func kindString(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return Printable(name)
	}
	return Printable(namespace + "/" + name)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clusterScopedReferenced reports whether gk is a cluster-scoped referenced
// kind (a ClusterServingRuntime): such an object keeps no namespace, and is
// found by the roots of every namespace.
func clusterScopedReferenced(reg *graph.Registry, gk schema.GroupKind) bool {
	e, ok := reg.Referenced(gk)
	return ok && e.ClusterScoped
}

// optedIn reports whether labels opt a namespace in.
func optedIn(labels map[string]string) bool { return labels[graph.OptInLabel] == "true" }

// isController reports whether ref is a controller reference.
func isController(ref metav1.OwnerReference) bool { return ref.Controller != nil && *ref.Controller }

// guessResource is a plural for a kind no adapter declares, good enough for
// the offline scan, which reads objects by kind and never by resource.
func guessResource(kind string) string {
	r := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(r, "s"), strings.HasSuffix(r, "x"):
		return r + "es"
	case strings.HasSuffix(r, "y") && len(r) > 1 && !strings.ContainsRune("aeiou", rune(r[len(r)-2])):
		return r[:len(r)-1] + "ies"
	}
	return r + "s"
}
