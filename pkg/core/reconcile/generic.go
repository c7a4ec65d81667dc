package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/generic"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Generic roots (pod-level conservation): every Pod with an AI signal in an
// opted-in namespace is in exactly one AIBOM, whoever created it. A root is
// generic when no adapter tracks its kind: the topmost controller owner of a
// chain that passes through no tracked kind (an operator's custom resource no
// adapter declares, a ReplicaSet nothing controls), or a Pod nothing controls.
// Where the controller may not read the owner's kind, the root is the owner
// as its children's controller reference names it (kind, name, UID): the
// objects naming the same owner are grouped under one AIBOM without a read.

// Outcomes of a generic root's reconcile.
const (
	// OutcomeNotRoot: an object of a kind no adapter tracks that is not the
	// top of its chain (something controls it): it has no AIBOM.
	OutcomeNotRoot = "not_root"
	// OutcomeNothingBelow: a generic root that absorbs no workload and no
	// pod: not a workload, no AIBOM.
	OutcomeNothingBelow = "nothing_below"
)

var genericUnread = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "aibom_generic_owner_unread_total",
	Help: "Reconciles of a generic root the controller could not read (its kind not served, or not permitted): it is the owner as its children's references name it, its spec unread.",
}, []string{"kind"})

func init() { metrics.Registry.MustRegister(genericUnread) }

// reconcileGeneric reconciles a generic root candidate named by req: an
// object of a registered kind no adapter tracks (entry, registered), or one
// of a kind the controller cannot read, known by the reference naming it
// (req.UID).
func (r *Reconciler) reconcileGeneric(ctx context.Context, req Request, entry graph.Entry, registered bool) (string, error) {
	aibomKey := client.ObjectKey{Namespace: req.Namespace, Name: AIBOMName(req.GroupKind, req.Name)}
	optedIn, err := r.namespaceOptedIn(ctx, req.Namespace)
	if err != nil {
		return OutcomeError, err
	}
	if !optedIn {
		return OutcomeNotOptedIn, r.deleteAIBOM(ctx, aibomKey, "namespace not opted in")
	}
	var root client.Object
	unread := !registered
	if registered {
		obj, err := r.Store.Get(ctx, entry, req.Namespace, req.Name)
		switch {
		case apierrors.IsNotFound(err):
			r.forgetReach(req)
			return OutcomeDeleted, r.deleteAIBOM(ctx, aibomKey, "generic root deleted")
		case errors.Is(err, graph.ErrKindNotSynced):
			return OutcomeOwnerNotSynced, nil
		case err != nil && entry.Generic() && errors.Is(err, graph.ErrKindNotReady):
			unread = true // not served, or not permitted: as the references name it
		case errors.Is(err, graph.ErrKindNotReady):
			return OutcomeKindUnavailable, nil
		case err != nil:
			return OutcomeError, fmt.Errorf("get %s: %w", req, err)
		default:
			setGVK(obj, entry)
			root = obj
		}
	}
	if !unread {
		walk := r.Walker().TrackedOwner(ctx, root)
		if walk.Reason == graph.ReasonNotSynced {
			return OutcomeOwnerNotSynced, nil
		}
		walk, wait := r.settleDangling(ctx, req.GroupKind, root, walk)
		if wait > 0 {
			return OutcomeOwnerGone, errWaitDangling{after: wait}
		}
		if walk.Owner != nil && walk.Owner.Generic && r.Queue != nil {
			// The generic root above it (past a dangling reference's
			// grace, the topmost owner read below the missing one) may
			// have no event of its own: it is reconciled with what it
			// absorbs.
			r.Queue.Add(Request{GroupKind: walk.Owner.GroupKind, Namespace: walk.Owner.Namespace, Name: walk.Owner.Name, UID: types.UID(walk.Owner.UID)})
		}
		if !r.Walker().IsGenericRoot(root, walk) {
			r.forgetReach(req)
			if walk.Owner != nil {
				return OutcomeRolledUp, r.deleteAIBOM(ctx, aibomKey, "rolled up into "+walk.Owner.GroupKind.Kind+"/"+walk.Owner.Name)
			}
			return OutcomeNotRoot, r.deleteAIBOM(ctx, aibomKey, "no longer the top of its ownership chain")
		}
		r.countMiss(ctx, walk)
	} else {
		if req.UID == "" {
			// Named without its UID (its kind was tracked a moment ago):
			// its AIBOM, if any, says which object it describes.
			uid, ok, err := r.subjectUID(ctx, aibomKey, req)
			if err != nil {
				return OutcomeError, err
			}
			if !ok {
				return OutcomeNothingBelow, nil
			}
			req.UID = uid
		}
		root = r.unreadRoot(req, entry, registered)
		label := req.GroupKind.String()
		if _, noted := r.Registry.UnknownOwnerVersion(req.GroupKind); !noted && !registered {
			label = "other" // past the bound on noted kinds: labels stay bounded
		}
		genericUnread.WithLabelValues(label).Inc()
	}
	desc, err := r.Closure().Descendants(ctx, root)
	if err != nil {
		return OutcomeError, err
	}
	self, _ := root.(*unstructured.Unstructured)
	if req.GroupKind == graph.PodGroupKind && self != nil {
		// A bare pod's own status gives its running digests.
		desc.Pods = append([]*unstructured.Unstructured{self}, desc.Pods...)
	}
	if len(desc.Tracked) == 0 && len(desc.Pods) == 0 && !signalOfItsOwn(ctx, self) {
		// Absorbs nothing and embeds no AI workload: not a workload (or,
		// unread, its children are gone).
		r.forgetReach(req)
		return OutcomeNothingBelow, r.deleteAIBOM(ctx, aibomKey, "generic root absorbs no workload and no pod")
	}
	r.countClosureMisses(ctx, desc)
	if r.Mapper != nil {
		r.Mapper.Roots.rememberReach(req, desc.Live)
	}
	if self == nil {
		self = stubUnstructured(root)
	}
	rentry := graph.GenericEntry(self.GroupVersionKind(), entry.Resource)
	return r.report(withGenericRoot(r.withResolver(ctx, req.Namespace), unread), rentry, self, desc, aibomKey)
}

// unreadRoot is the object standing for a generic root known only from its
// children's references.
func (r *Reconciler) unreadRoot(req Request, entry graph.Entry, registered bool) client.Object {
	version := entry.Version
	if !registered {
		version, _ = r.Registry.UnknownOwnerVersion(req.GroupKind)
	}
	if version == "" {
		version = "v1"
	}
	return ownerStub(req.GroupKind.WithVersion(version), req.Namespace, req.Name, req.UID)
}

// ownerStub is the metadata-only object standing for a generic root known
// from a reference: the closure finds its children by UID without a read.
func ownerStub(gvk schema.GroupVersionKind, namespace, name string, uid types.UID) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	m.SetNamespace(namespace)
	m.SetName(name)
	m.SetUID(uid)
	return m
}

// stubUnstructured is the unstructured form of an object read as metadata
// only (the scrape sees its identity, and no spec).
func stubUnstructured(o client.Object) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
	u.SetNamespace(o.GetNamespace())
	u.SetName(o.GetName())
	u.SetUID(o.GetUID())
	if ann := o.GetAnnotations(); len(ann) > 0 {
		u.SetAnnotations(ann)
	}
	return u
}

type genericRootKey struct{}

// withGenericRoot marks a reconcile as a generic root's (unread: known only
// from references).
func withGenericRoot(ctx context.Context, unread bool) context.Context {
	return context.WithValue(ctx, genericRootKey{}, &unread)
}

// genericRootOf reports whether ctx is a generic root's reconcile, and
// whether that root is unread.
func genericRootOf(ctx context.Context) (generic, unread bool) {
	v, ok := ctx.Value(genericRootKey{}).(*bool)
	if !ok {
		return false, false
	}
	return true, *v
}

// fillFromBelow completes the inputs of a root whose own findings carry no
// AI signal, or, for a generic root, name no container (an owner whose spec
// names only its model or engine), with what it absorbed (the whole
// roll-up's signal): the findings
// of each absorbed workload, scraped by its adapter, and of the pods the
// closure attributes that may be read as a generic root's (their spec is
// cached), one pod per distinct set of containers. Each finding's locator is
// prefixed with the object it was read from ("Deployment/vllm:spec..."). A
// child with a signal is then never hidden under an owner that has none, and
// a root's document names the images that run under it, with their digests.
func (r *Reconciler) fillFromBelow(ctx context.Context, in *Inputs, desc graph.Descendants) {
	FillFromBelow(ctx, r.Registry, r.Store, in, desc)
}

// FillFromBelow is the reconciler's fillFromBelow over any store (the command
// line's offline scan reads manifests through a graph.MemoryStore).
func FillFromBelow(ctx context.Context, reg *graph.Registry, store graph.Store, in *Inputs, desc graph.Descendants) {
	if in.ScrapeErr != nil {
		return
	}
	_, matched := in.Findings.Match()
	if matched && (len(in.Findings.Containers) > 0 || !in.Subject.Generic) {
		// A root with a signal of its own keeps it; a tracked root's adapter
		// is precise about what it names (a KServe InferenceService's
		// runtime comes from its ServingRuntime, not from every revision's
		// Deployment).
		return
	}
	var extra adapter.Findings
	for _, t := range desc.Tracked {
		gk := t.GetObjectKind().GroupVersionKind().GroupKind()
		e, ok := reg.Lookup(gk)
		if !ok || !e.Tracked() {
			continue
		}
		obj, err := store.Get(ctx, e, t.GetNamespace(), t.GetName())
		u, isU := obj.(*unstructured.Unstructured)
		if err != nil || !isU {
			continue
		}
		f, err := scrapeSafely(ctx, e.Adapter, u)
		if err != nil {
			continue
		}
		sanitize(ctx, e.Adapter.Name(), &f)
		prefixLocators(&f, gk.Kind+"/"+t.GetName()+":")
		podtemplate.MergeFindings(&extra, f)
	}
	pods, omitted := podsToRead(desc.Pods)
	for _, p := range pods {
		f, err := generic.Scrape(ctx, p.pod)
		if err != nil {
			continue
		}
		sanitize(ctx, graph.GenericAdapterName, &f)
		prefixLocators(&f, "Pod/"+p.label+":")
		podtemplate.MergeFindings(&extra, f)
	}
	if omitted > 0 {
		extra.Properties = append(extra.Properties, adapter.Property{Name: PropPodSpecsNotRead, Value: strconv.Itoa(omitted)})
	}
	if _, ok := extra.Match(); !ok && !matched {
		return
	}
	have := map[string]bool{}
	for _, c := range in.Findings.Containers {
		have[c.Name+"\x00"+c.Image] = true
	}
	containers := extra.Containers[:0:0]
	for _, c := range extra.Containers {
		if !have[c.Name+"\x00"+c.Image] {
			have[c.Name+"\x00"+c.Image] = true
			containers = append(containers, c)
		}
	}
	extra.Containers = containers
	podtemplate.MergeFindings(&in.Findings, extra)
	in.Images, in.Digests = resolveImagesAndDigests(&in.Findings, desc)
	in.Hash = in.hash()
}

// MaxPodSpecsRead bounds the distinct pod specs (podSignature) read below
// one root: whoever may create pods under an owner must not make its
// reconcile read without end. The rest are counted in PropPodSpecsNotRead.
const MaxPodSpecsRead = 32

// PropPodSpecsNotRead is the document property that counts the distinct pod
// specs below a root past MaxPodSpecsRead, not read.
const PropPodSpecsNotRead = "aibom.generic.podSpecsNotRead"

type podToRead struct {
	pod        *unstructured.Unstructured
	label, sig string
}

// podsToRead picks, among the pods with a spec, one per distinct spec
// (podSignature): the one with the smallest label, then name, in label
// order, at most MaxPodSpecsRead of them; omitted counts the other distinct
// specs. The
// choice and the locators do not depend on the order pods are listed in,
// and a replica replaced by another of the same generateName keeps its
// label, so a rolling restart does not rewrite the document.
func podsToRead(all []*unstructured.Unstructured) (pods []podToRead, omitted int) {
	bySig := map[string]podToRead{}
	for _, p := range all {
		if _, hasSpec := p.Object["spec"]; !hasSpec {
			continue
		}
		sig, label := podSignature(p), podLabel(p)
		// The smallest label, then the smallest name: replicas of one
		// generateName share the label (and may differ in arguments).
		if cur, ok := bySig[sig]; !ok || label < cur.label || (label == cur.label && p.GetName() < cur.pod.GetName()) {
			bySig[sig] = podToRead{pod: p, label: label, sig: sig}
		}
	}
	for _, p := range bySig {
		pods = append(pods, p)
	}
	slices.SortFunc(pods, func(a, b podToRead) int {
		return cmp.Or(strings.Compare(a.label, b.label), strings.Compare(a.sig, b.sig))
	})
	if len(pods) > MaxPodSpecsRead {
		omitted = len(pods) - MaxPodSpecsRead
		pods = pods[:MaxPodSpecsRead]
	}
	return pods, omitted
}

// podLabel names a pod in locators: "<generateName>*" for a pod named from
// its generateName (its replicas and replacements share it), its name
// otherwise.
func podLabel(p *unstructured.Unstructured) string {
	if gn := p.GetGenerateName(); gn != "" && strings.HasPrefix(p.GetName(), gn) {
		return gn + "*"
	}
	return p.GetName()
}

// podSignature identifies a pod's containers by name and image, so that
// replicas are read once.
func podSignature(p *unstructured.Unstructured) string {
	var sig string
	for _, field := range []string{"initContainers", "containers"} {
		list, _, _ := unstructured.NestedSlice(p.Object, "spec", field)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				name, _ := m["name"].(string)
				image, _ := m["image"].(string)
				sig += field + "\x00" + name + "\x00" + image + "\x00"
			}
		}
	}
	return sig
}

// prefixLocators prefixes every evidence locator of f with the object it was
// read from.
func prefixLocators(f *adapter.Findings, prefix string) {
	for i := range f.Containers {
		f.Containers[i].Evidence.Locator = prefix + f.Containers[i].Evidence.Locator
	}
	for i := range f.Runtimes {
		f.Runtimes[i].Evidence.Locator = prefix + f.Runtimes[i].Evidence.Locator
	}
	for i := range f.Models {
		f.Models[i].Evidence.Locator = prefix + f.Models[i].Evidence.Locator
	}
	for i := range f.Data {
		f.Data[i].Evidence.Locator = prefix + f.Data[i].Evidence.Locator
	}
	for i := range f.Frameworks {
		f.Frameworks[i].Evidence.Locator = prefix + f.Frameworks[i].Evidence.Locator
	}
	for i := range f.Accelerators {
		f.Accelerators[i].Evidence.Locator = prefix + f.Accelerators[i].Evidence.Locator
	}
	for i := range f.Redactions {
		f.Redactions[i].Locator = prefix + f.Redactions[i].Locator
	}
}

// BuildRootReport is BuildReport for a root the way the reconciler builds
// it: a generic root's subject says so (unread: known only from its
// children's references), and a root with no AI signal of its own is
// completed with what it absorbed (FillFromBelow).
func BuildRootReport(ctx context.Context, reg *graph.Registry, store graph.Store, entry graph.Entry, obj *unstructured.Unstructured, desc graph.Descendants, tool document.Tool, maxBytes int, genericRoot, unread bool) Report {
	in := GatherInputs(ctx, entry, obj, desc, tool, maxBytes)
	if genericRoot {
		in.Subject.Generic, in.Subject.Unread = true, unread
		in.Hash = in.hash()
	}
	FillFromBelow(ctx, reg, store, &in, desc)
	return in.Build()
}

// GenericRoot is a generic root found among objects (see GenericRoots).
type GenericRoot struct {
	// Entry is the entry its report is built with (the generic adapter).
	Entry graph.Entry
	// Object is the root (its stub when unread).
	Object *unstructured.Unstructured
	// Descendants is its closure (a bare pod's own status among its pods).
	Descendants graph.Descendants
	// Unread: known only from its children's controller references.
	Unread bool
}

// GenericRoots finds the generic roots among the objects of store in the
// namespaces keep selects (nil: all), as the reconciler decides them: the
// objects of kinds no adapter tracks at the top of their chains, and the
// owners of kinds not registered as their children's references name them;
// a root that absorbs nothing is none.
func GenericRoots(ctx context.Context, reg *graph.Registry, store graph.Store, keep func(namespace string) bool) ([]GenericRoot, error) {
	walker := graph.Walker{Registry: reg, Store: store}
	closure := graph.Closure{Registry: reg, Store: store}
	var out []GenericRoot
	seen := map[string]bool{}
	add := func(root client.Object, unread bool) error {
		key := root.GetObjectKind().GroupVersionKind().GroupKind().String() + "/" + root.GetNamespace() + "/" + root.GetName() + "/" + string(root.GetUID())
		if seen[key] {
			return nil
		}
		seen[key] = true
		desc, err := closure.Descendants(ctx, root)
		if err != nil {
			return err
		}
		self, _ := root.(*unstructured.Unstructured)
		if root.GetObjectKind().GroupVersionKind().GroupKind() == graph.PodGroupKind && self != nil {
			desc.Pods = append([]*unstructured.Unstructured{self}, desc.Pods...)
		}
		if len(desc.Tracked) == 0 && len(desc.Pods) == 0 && !signalOfItsOwn(ctx, self) {
			return nil
		}
		if self == nil {
			self = stubUnstructured(root)
		}
		out = append(out, GenericRoot{Entry: graph.GenericEntry(self.GroupVersionKind(), ""), Object: self, Descendants: desc, Unread: unread})
		return nil
	}
	for _, e := range reg.Entries() {
		// The walk reads metadata: a root alone is read whole.
		objs, err := graph.InNamespaceMetadata(ctx, store, e, metav1.NamespaceAll)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", e.Kind.String(), err)
		}
		for _, o := range objs {
			if keep != nil && !keep(o.GetNamespace()) {
				continue
			}
			if o.GetObjectKind().GroupVersionKind().Empty() {
				// The store's own object: set the kind on a copy.
				o = o.DeepCopyObject().(client.Object)
				o.GetObjectKind().SetGroupVersionKind(e.GVK())
			}
			// Decided as past the dangling-owner grace: offline, no garbage
			// collector is about to act.
			walk := walker.TrackedOwner(ctx, o).Settle()
			switch {
			case walk.Owner != nil && walk.Owner.Unread:
				gv, _ := schema.ParseGroupVersion(walk.Owner.APIVersion)
				stub := ownerStub(walk.Owner.GroupKind.WithVersion(gv.Version), walk.Owner.Namespace, walk.Owner.Name, types.UID(walk.Owner.UID))
				if err := add(stub, true); err != nil {
					return nil, err
				}
			case walker.IsGenericRoot(o, walk):
				whole, err := store.Get(ctx, e, o.GetNamespace(), o.GetName())
				if err != nil {
					return nil, fmt.Errorf("get %s %s/%s: %w", e.Kind.String(), o.GetNamespace(), o.GetName(), err)
				}
				if whole.GetObjectKind().GroupVersionKind().Empty() {
					whole.GetObjectKind().SetGroupVersionKind(e.GVK())
				}
				if err := add(whole, false); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// signalOfItsOwn reports whether an object read whole (not a stub) embeds an
// AI workload in its own spec (pod templates the generic scraper reads): a
// custom resource whose operator has not made its pods yet is still one.
func signalOfItsOwn(ctx context.Context, u *unstructured.Unstructured) bool {
	if u == nil || u.GetKind() == "Pod" {
		return false
	}
	if _, ok := u.Object["spec"]; !ok {
		return false
	}
	f, err := generic.Scrape(ctx, u)
	if err != nil {
		return false
	}
	_, ok := f.Match()
	return ok
}

// subjectUID is the UID of the subject the AIBOM at key describes, when it
// describes the object req names.
func (r *Reconciler) subjectUID(ctx context.Context, key client.ObjectKey, req Request) (types.UID, bool, error) {
	a := &v1alpha1.AIBOM{}
	if err := r.Reader.Get(ctx, key, a); apierrors.IsNotFound(err) {
		return "", false, nil
	} else if err != nil {
		return "", false, fmt.Errorf("get AIBOM %s: %w", key, err)
	}
	if a.Spec.Subject.Kind != req.Kind || a.Spec.Subject.Name != req.Name || a.Spec.Subject.UID == "" {
		return "", false, nil
	}
	return types.UID(a.Spec.Subject.UID), true, nil
}
