package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

// Conservation checks Design 005's invariant against the live cluster: every
// tracked workload in an opted-in namespace is in exactly one AIBOM, as the
// subject of its own (a root) or in the aibom.rollup.owned list of the root
// that absorbs it; no AIBOM names a workload that does not exist or that is
// rolled up; no AIBOM lives in a namespace that did not opt in.
//
// The expected roots are computed here, independently of pkg/core, from the
// seed's rules (§1): controller ownerReferences only, followed through the
// registered kinds with a UID check on every hop, at most graph.MaxWalkDepth
// hops, stopping at the first tracked ancestor; an owner that does not exist,
// has another UID, is of an unregistered, unserved or unreadable kind ends
// the walk (the workload is a root); a tracked workload on an ownerReference
// cycle is its own root. A root absorbs every tracked workload whose chain of
// nearest tracked ancestors ends at it.
//
// AIBOMs of a registered kind the cluster no longer serves (deleted with
// their CRD) are kept by design; they are listed as Retained and take no
// part in the count.
type Conservation struct {
	// Reader reads the cluster directly (the test's own client, not a
	// controller's cache).
	Reader client.Reader
	// Registry holds the controller's kinds (Controller.Registry).
	Registry *graph.Registry
	// Namespaces limits the check; empty means every namespace.
	Namespaces []string
	// Unreadable are kinds the controller may not read (RBAC) although the
	// Reader can: an owner of such a kind ends the walk.
	Unreadable []schema.GroupKind
}

// Conservation returns the check of the invariant for the controller's kinds
// in the given namespaces (every namespace when none), read with the test's
// client.
func (e *Env) Conservation(c *Controller, namespaces ...string) Conservation {
	return Conservation{Reader: e.Client, Registry: c.Registry, Namespaces: namespaces}
}

// ConservationReport is the outcome of one check.
type ConservationReport struct {
	// Workloads is the number of tracked workloads in scope (opted-in
	// namespaces), Roots how many of them are roots, AIBOMs the number of
	// AIBOMs in scope.
	Workloads, Roots, AIBOMs int
	// Retained lists AIBOMs kept for workloads of kinds the cluster no
	// longer serves.
	Retained []string
	// Violations lists every breach of the invariant, readable.
	Violations []string
}

// Err returns nil when the invariant holds, else an error listing every
// violation.
func (r ConservationReport) Err() error {
	if len(r.Violations) == 0 {
		return nil
	}
	return fmt.Errorf("conservation violated (%d workloads, %d roots, %d AIBOMs), %d violations:\n  - %s",
		r.Workloads, r.Roots, r.AIBOMs, len(r.Violations), strings.Join(r.Violations, "\n  - "))
}

// objectKey names an object of a registered kind.
type objectKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func (k objectKey) String() string { return graph.OwnedIdentity(k.gk, k.name) }

// snapshot is the metadata of every object of a registered kind.
type snapshot struct {
	reg        *graph.Registry
	objs       map[objectKey]*metav1.PartialObjectMetadata
	served     map[schema.GroupKind]bool
	unreadable map[schema.GroupKind]bool
}

// Verify checks the invariant once and returns Err of the report (or the
// read error).
func (c Conservation) Verify(ctx context.Context) error {
	r, err := c.Check(ctx)
	if err != nil {
		return err
	}
	return r.Err()
}

// Check reads the cluster and checks the invariant. The error is a read
// failure; violations are in the report.
func (c Conservation) Check(ctx context.Context) (ConservationReport, error) {
	var rep ConservationReport
	if c.Reader == nil || c.Registry == nil {
		return rep, fmt.Errorf("conservation: Reader and Registry are required")
	}
	nsList := &metav1.PartialObjectMetadataList{}
	nsList.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "NamespaceList"})
	if err := c.Reader.List(ctx, nsList); err != nil {
		return rep, fmt.Errorf("conservation: list namespaces: %w", err)
	}
	optedIn := map[string]bool{}
	for _, ns := range nsList.Items {
		optedIn[ns.Name] = ns.Labels[graph.OptInLabel] == "true"
	}
	inScope := func(ns string) bool { return len(c.Namespaces) == 0 || slices.Contains(c.Namespaces, ns) }

	snap := &snapshot{reg: c.Registry, objs: map[objectKey]*metav1.PartialObjectMetadata{}, served: map[schema.GroupKind]bool{}, unreadable: map[schema.GroupKind]bool{}}
	for _, gk := range c.Unreadable {
		snap.unreadable[gk] = true
	}
	for _, e := range c.Registry.Entries() {
		items, served, err := listServed(ctx, c.Reader, e)
		if err != nil {
			return rep, err
		}
		snap.served[e.GroupKind()] = served
		for i := range items {
			o := &items[i]
			snap.objs[objectKey{e.GroupKind(), o.Namespace, o.Name}] = o
		}
	}

	// The tracked workloads in scope, their nearest tracked owner and root.
	var workloads []objectKey
	for k := range snap.objs {
		if c.Registry.IsTracked(k.gk) && inScope(k.namespace) && optedIn[k.namespace] {
			workloads = append(workloads, k)
		}
	}
	sortKeys(workloads)
	rep.Workloads = len(workloads)
	rootOf := map[objectKey]objectKey{}
	expectedOwned := map[objectKey][]string{}
	for _, w := range workloads {
		r := snap.root(w)
		rootOf[w] = r
		if r == w {
			rep.Roots++
		} else {
			expectedOwned[r] = append(expectedOwned[r], w.String())
		}
	}

	list := &v1alpha1.AIBOMList{}
	if err := c.Reader.List(ctx, list); err != nil {
		return rep, fmt.Errorf("conservation: list AIBOMs: %w", err)
	}
	appearances := map[objectKey][]string{}
	subjects := map[objectKey][]string{}
	violate := func(format string, args ...any) {
		rep.Violations = append(rep.Violations, fmt.Sprintf(format, args...))
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	for i := range list.Items {
		a := &list.Items[i]
		if !inScope(a.Namespace) {
			continue
		}
		rep.AIBOMs++
		id := a.Namespace + "/" + a.Name
		if !optedIn[a.Namespace] {
			violate("AIBOM %s is in namespace %s, which did not opt in", id, a.Namespace)
			continue
		}
		gv, err := schema.ParseGroupVersion(a.Spec.Subject.APIVersion)
		if err != nil {
			violate("AIBOM %s: subject apiVersion %q: %v", id, a.Spec.Subject.APIVersion, err)
			continue
		}
		subject := objectKey{schema.GroupKind{Group: gv.Group, Kind: a.Spec.Subject.Kind}, a.Namespace, a.Spec.Subject.Name}
		if !c.Registry.IsTracked(subject.gk) {
			violate("AIBOM %s: subject %s is not of a tracked kind", id, subject.gk)
			continue
		}
		if !snap.served[subject.gk] {
			rep.Retained = append(rep.Retained, id+" ("+subject.gk.String()+" no longer served)")
			continue
		}
		subjects[subject] = append(subjects[subject], id)
		if want := reconcile.AIBOMName(subject.gk, subject.name); a.Name != want {
			violate("AIBOM %s: named %q, its subject %s %s gives %q", id, a.Name, subject.gk, subject.name, want)
		}
		obj := snap.objs[subject]
		switch {
		case obj == nil:
			violate("AIBOM %s: its subject %s %s/%s does not exist", id, subject.gk, a.Namespace, subject.name)
			continue
		case string(obj.UID) != a.Spec.Subject.UID:
			violate("AIBOM %s: names subject UID %s, but %s %s/%s has UID %s", id, a.Spec.Subject.UID, subject.gk, a.Namespace, subject.name, obj.UID)
			continue
		case rootOf[subject] != subject:
			violate("AIBOM %s: its subject %s %s/%s is rolled up into %s", id, subject.gk, a.Namespace, subject.name, rootOf[subject])
		}
		appearances[subject] = append(appearances[subject], id+" (subject)")
		for _, owned := range a.Status.Absorbed {
			matched := snap.trackedNamed(a.Namespace, owned)
			if len(matched) == 0 {
				violate("AIBOM %s: absorbs %s, which is not a tracked workload in %s", id, owned, a.Namespace)
			}
			for _, m := range matched {
				appearances[m] = append(appearances[m], id+" (absorbed)")
			}
		}
		want := expectedOwned[subject]
		slices.SortFunc(want, graph.CompareOwned)
		if !slices.Equal(want, a.Status.Absorbed) {
			violate("AIBOM %s: absorbs %v, want %v", id, a.Status.Absorbed, want)
		}
		for _, p := range documentProblems(a, subject) {
			violate("AIBOM %s: %s", id, p)
		}
	}
	for s, ids := range subjects {
		if len(ids) > 1 {
			violate("%s %s/%s is the subject of %d AIBOMs: %v", s.gk, s.namespace, s.name, len(ids), ids)
		}
	}
	for _, w := range workloads {
		got := appearances[w]
		if rootOf[w] == w && !slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, " (subject)") }) {
			violate("%s %s/%s (uid %s) is a root without an AIBOM", w.gk, w.namespace, w.name, snap.objs[w].UID)
		}
		switch {
		case len(got) == 0 && rootOf[w] == w:
		case len(got) == 0:
			violate("%s %s/%s is in no AIBOM; it belongs to the document of its root %s %s", w.gk, w.namespace, w.name, rootOf[w].gk, rootOf[w].name)
		case len(got) > 1:
			violate("%s %s/%s is in %d AIBOMs: %v", w.gk, w.namespace, w.name, len(got), got)
		}
	}
	sort.Strings(rep.Violations)
	return rep, nil
}

// Eventually polls Check until the invariant holds and returns the report;
// it fails t with the last violations when timeout passes first.
func (c Conservation) Eventually(t testing.TB, timeout time.Duration) ConservationReport {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rep, err := c.Check(ctx)
		cancel()
		if err == nil && rep.Err() == nil {
			return rep
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("conservation never held within %s; last check failed: %v", timeout, err)
			}
			t.Fatalf("conservation never held within %s; last check: %v", timeout, rep.Err())
			return rep
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// listServed lists a kind's objects' metadata in every namespace, in the
// adapter's most preferred version the cluster serves. served is false when
// it serves none of them.
func listServed(ctx context.Context, r client.Reader, e graph.Entry) ([]metav1.PartialObjectMetadata, bool, error) {
	for _, v := range e.Versions {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: e.Group, Version: v, Kind: e.Kind.Kind + "List"})
		err := r.List(ctx, l)
		switch {
		case err == nil:
			return l.Items, true, nil
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			continue
		default:
			return nil, false, fmt.Errorf("conservation: list %s %s: %w", e.Kind.String(), v, err)
		}
	}
	return nil, false, nil
}

// owner returns the object a controller reference names, when the walk may
// pass it: a registered kind the cluster serves and the controller may read,
// an object of that name, with the reference's UID.
func (s *snapshot) owner(namespace string, ref *metav1.OwnerReference) (objectKey, bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return objectKey{}, false
	}
	k := objectKey{schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, namespace, ref.Name}
	if _, registered := s.reg.Lookup(k.gk); !registered || !s.served[k.gk] || s.unreadable[k.gk] {
		return objectKey{}, false
	}
	o := s.objs[k]
	if o == nil || o.UID != ref.UID {
		return objectKey{}, false
	}
	return k, true
}

// trackedOwner is the walk of seed §1: the nearest tracked ancestor of w.
func (s *snapshot) trackedOwner(w objectKey) (objectKey, bool) {
	cur := w
	for hop := 1; ; hop++ {
		ref := metav1.GetControllerOfNoCopy(s.objs[cur])
		if ref == nil || hop > graph.MaxWalkDepth {
			return objectKey{}, false
		}
		next, ok := s.owner(w.namespace, ref)
		if !ok {
			return objectKey{}, false
		}
		if s.reg.IsTracked(next.gk) {
			if s.chain(next)[s.objs[w].UID] {
				return objectKey{}, false // an ownerReference cycle: w is its own root
			}
			return next, true
		}
		cur = next
	}
}

// chain returns the UIDs on k's controller chain (k included), followed as
// far as the walk could, up to a repeat.
func (s *snapshot) chain(k objectKey) map[types.UID]bool {
	seen := map[types.UID]bool{s.objs[k].UID: true}
	cur := k
	for i := 0; i < 64; i++ {
		ref := metav1.GetControllerOfNoCopy(s.objs[cur])
		if ref == nil {
			break
		}
		if seen[ref.UID] {
			seen[ref.UID] = true
			break
		}
		next, ok := s.owner(k.namespace, ref)
		if !ok {
			break
		}
		seen[ref.UID] = true
		cur = next
	}
	return seen
}

// root follows nearest tracked owners up to the workload that reports w.
func (s *snapshot) root(w objectKey) objectKey {
	seen := map[objectKey]bool{w: true}
	r := w
	for {
		next, ok := s.trackedOwner(r)
		if !ok || seen[next] {
			return r
		}
		seen[next] = true
		r = next
	}
}

// trackedNamed resolves an aibom.rollup.owned value "<Kind>.<group>/<name>"
// to the tracked workload it names in namespace (none when it does not
// exist).
func (s *snapshot) trackedNamed(namespace, owned string) []objectKey {
	gk, name, ok := graph.ParseOwnedIdentity(owned)
	if !ok || !s.reg.IsTracked(gk) {
		return nil
	}
	k := objectKey{gk, namespace, name}
	if s.objs[k] == nil {
		return nil
	}
	return []objectKey{k}
}

// documentProblems checks that an AIBOM's status agrees with itself and with
// its document: Ready, the document's hash and subject, and its
// aibom.rollup.owned properties equal to status.absorbed.
func documentProblems(a *v1alpha1.AIBOM, subject objectKey) []string {
	var out []string
	if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		out = append(out, fmt.Sprintf("not Ready (%+v)", c))
	}
	if a.Status.Document == "" {
		return append(out, "no document")
	}
	sum := sha256.Sum256([]byte(a.Status.Document))
	if got := hex.EncodeToString(sum[:]); got != a.Status.DocumentSHA256 {
		out = append(out, fmt.Sprintf("documentSHA256 %s, the document hashes to %s", a.Status.DocumentSHA256, got))
	}
	if a.Status.AbsorbedCount != len(a.Status.Absorbed) {
		out = append(out, fmt.Sprintf("absorbedCount %d, absorbed lists %d", a.Status.AbsorbedCount, len(a.Status.Absorbed)))
	}
	var bom struct {
		Metadata struct {
			Component struct {
				Name       string                         `json:"name"`
				Properties []struct{ Name, Value string } `json:"properties"`
			} `json:"component"`
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(a.Status.Document), &bom); err != nil {
		return append(out, "document is not JSON: "+err.Error())
	}
	want := map[string]string{
		"aibom.workload.kind":      subject.gk.Kind,
		"aibom.workload.group":     subject.gk.Group,
		"aibom.workload.namespace": subject.namespace,
		"aibom.workload.uid":       a.Spec.Subject.UID,
	}
	got := map[string]string{}
	for _, p := range bom.Metadata.Component.Properties {
		got[p.Name] = p.Value
	}
	for name, v := range want {
		if got[name] != v {
			out = append(out, fmt.Sprintf("document's %s is %q, want %q", name, got[name], v))
		}
	}
	if bom.Metadata.Component.Name != subject.name {
		out = append(out, fmt.Sprintf("document's metadata.component.name is %q, want %q", bom.Metadata.Component.Name, subject.name))
	}
	var owned []string
	for _, p := range bom.Metadata.Properties {
		if strings.HasPrefix(p.Name, "aibom.rollup.owned.") {
			if p.Name != fmt.Sprintf("aibom.rollup.owned.%d", len(owned)) {
				out = append(out, fmt.Sprintf("document property %s out of sequence", p.Name))
			}
			owned = append(owned, p.Value)
		}
	}
	if !slices.Equal(owned, a.Status.Absorbed) && (len(owned) > 0 || len(a.Status.Absorbed) > 0) {
		out = append(out, fmt.Sprintf("document lists aibom.rollup.owned %v, status.absorbed is %v", owned, a.Status.Absorbed))
	}
	return out
}

func sortKeys(keys []objectKey) {
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		if a.gk.String() != b.gk.String() {
			return a.gk.String() < b.gk.String()
		}
		return a.name < b.name
	})
}
