package scan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/pkg/core"
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
	// duplicates kept, kinds not served ...), in order.
	Notes []string
	// Partial is set when something that should have been read could not
	// be (a kind the cluster refused to list).
	Partial bool
}

// FileOptions tune LoadFiles.
type FileOptions struct {
	// Paths are files and directories (see manifest.Files).
	Paths []string
	// Limits bound the input (manifest.DefaultLimits when zero).
	Limits manifest.Limits
	// Namespace is given to objects without one ("default" when empty).
	Namespace string
	// AllowDuplicates keeps the last of objects read twice instead of
	// failing.
	AllowDuplicates bool
}

// DuplicateError reports objects read more than once.
type DuplicateError struct {
	// Duplicates has one line per duplicated object, naming every position.
	Duplicates []string
}

func (e *DuplicateError) Error() string {
	return "duplicate objects (use --allow-duplicates to keep the last):\n  " + strings.Join(e.Duplicates, "\n  ")
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

// LoadFiles reads manifests into a snapshot: objects without a namespace get
// opts.Namespace, objects without a UID get manifest.SyntheticUID, and
// ownerReferences that name their owner by kind and name are resolved within
// the files (manifest.ResolveOwners). Objects of kinds no adapter in reg
// knows are kept (they can be owners) and counted in a note. An object read
// twice (same group, kind, namespace and name) is a *DuplicateError unless
// opts.AllowDuplicates, which keeps the last one read. Any other error is an
// unreadable input and names the file and line.
func LoadFiles(reg *core.Registry, opts FileOptions) (*Snapshot, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = "default"
	}
	srcs, err := manifest.LoadSourcesLimited(opts.Limits, opts.Paths...)
	if err != nil {
		return nil, err
	}
	type key struct {
		gk              schema.GroupKind
		namespace, name string
	}
	index := map[key]int{} // key -> index in kept
	var kept []manifest.Source
	positions := map[key][]string{}
	var order []key
	for _, s := range srcs {
		o := s.Object
		gk := o.GroupVersionKind().GroupKind()
		if o.GetNamespace() == "" && !clusterScoped[gk] {
			o.SetNamespace(ns)
		}
		if o.GetName() == "" && o.GetGenerateName() != "" {
			// The API server would name it generateName plus a random
			// suffix; offline the suffix is derived from the position, so
			// the same input gives the same name.
			sum := sha256.Sum256([]byte(s.Position()))
			o.SetName(o.GetGenerateName() + hex.EncodeToString(sum[:])[:5])
		}
		if o.GetName() == "" {
			return nil, fmt.Errorf("%s: %s without metadata.name (or metadata.generateName)", s.Position(), o.GetKind())
		}
		k := key{gk, o.GetNamespace(), o.GetName()}
		if i, dup := index[k]; dup {
			if len(positions[k]) == 1 {
				order = append(order, k)
			}
			positions[k] = append(positions[k], s.Position())
			kept[i] = s
			continue
		}
		positions[k] = []string{s.Position()}
		index[k] = len(kept)
		kept = append(kept, s)
	}
	snap := &Snapshot{NamespaceLabels: map[string]map[string]string{}}
	if len(order) > 0 {
		var lines []string
		for _, k := range order {
			lines = append(lines, fmt.Sprintf("%s %s at %s", kindString(k.gk), objectName(k.namespace, k.name), strings.Join(positions[k], " and ")))
		}
		if !opts.AllowDuplicates {
			return nil, &DuplicateError{Duplicates: lines}
		}
		for _, l := range lines {
			snap.Notes = append(snap.Notes, "duplicate "+l+": keeping the last")
		}
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
			unknown[kindString(gvk.GroupKind())]++
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
		snap.Notes = append(snap.Notes, fmt.Sprintf("%d object(s) of kinds no enabled adapter knows were kept (they can own workloads, but get no document): %s", n, strings.Join(parts, ", ")))
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
		snap.Objects = append(snap.Objects, o)
	}
	return snap, nil
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

// optedIn reports whether labels opt a namespace in.
func optedIn(labels map[string]string) bool { return labels[core.OptInLabel] == "true" }

// isController reports whether ref is a controller reference.
func isController(ref metav1.OwnerReference) bool { return ref.Controller != nil && *ref.Controller }
