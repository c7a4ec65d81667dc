//go:build qualify

package operators

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// root is what a user expects of the document of one custom resource the
// samples create.
type root struct {
	gk   schema.GroupKind
	name string
	// owned is status.absorbed exactly, in any order: identities
	// "<Kind>.<group>/<name>", a name may be a path.Match pattern (for
	// the operators' generated names).
	owned []string
	// runtime is status.summary.runtime ("" for none).
	runtime string
	// models are the model components (base names), exactly.
	models []string
	// frameworks, applications and data must be among the document's
	// components of that type (base names); notApplications must not.
	frameworks, applications, data, notApplications []string
	// running: for each image, the number of pods its digest runs on.
	running map[string]int
}

// qualification is one operator's samples and the documents expected of
// them.
type qualification struct {
	op *operator
	// samples are the files of the operator's module that are applied;
	// extra, objects the suite writes itself (e.g. the Trainer ships
	// runtimes but no TrainJob), applied after them.
	samples []string
	extra   string
	// extraSource says where the extra objects come from (for
	// docs/compatibility.md).
	extraSource string
	roots       []root
	// finish: pods that run to completion (initializer Jobs).
	finish func(*corev1.Pod) bool
}

// objects are the samples as decoded, then the extra objects.
func (q *qualification) objects(t testing.TB) []*unstructured.Unstructured {
	objs := q.op.samples(t, q.samples...)
	if q.extra != "" {
		more, err := manifest.Decode(q.op.name+"-extra", []byte(q.extra))
		require.NoError(t, err)
		objs = append(objs, more...)
	}
	return objs
}

// apply creates the objects in ns (cluster-scoped ones as they are; one
// that exists is left).
func apply(t testing.TB, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		o := o.DeepCopy()
		o.SetNamespace(ns)
		err := env.Client.Create(context.Background(), o)
		if err != nil && strings.Contains(err.Error(), "already exists") {
			continue
		}
		require.NoError(t, err, "create %s %s", o.GetKind(), o.GetName())
	}
}

// qualify runs the samples of q in a fresh namespace with q's operator
// already running and checks, in order: the steady state; a controller
// restart; a background delete of every root (the garbage collector
// deletes the children: no AIBOM is written for any of them); a
// re-create. Each step ends with the conservation check.
func qualify(t *testing.T, q *qualification) *row {
	ctx := context.Background()
	ns := env.NewNamespace(t, "q", true)
	r := results.row(q)
	objs := q.objects(t)

	apply(t, ns, objs)
	got := waitDocuments(t, ns, q)
	r.observe(got, ownerChains(t, ns))
	requireConservation(t, ns)
	r.pass("roots", "chain", "runtime/model", "digests", "crd-after-start")

	// A controller restart: a new process reads everything again and
	// leaves every document as it was.
	require.NoError(t, controller.WaitSettled(3*time.Second, eventually))
	shas := documentSHAs(t, ns)
	require.NoError(t, restartController())
	require.NoError(t, controller.WaitSettled(3*time.Second, eventually))
	require.Equal(t, shas, documentSHAs(t, ns), "a restarted controller leaves the documents as they were")
	requireConservation(t, ns)
	r.pass("restart")

	// A background delete: the collector deletes the children, whose
	// controller reference dangles meanwhile; no AIBOM for any.
	for _, rt := range q.roots {
		waitCollectorKnows(t, sampleOf(objs, rt))
	}
	before := controller.Requests.Snapshot()
	for _, rt := range q.roots {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvkOf(objs, rt.gk))
		obj.SetNamespace(ns)
		obj.SetName(rt.name)
		require.NoError(t, env.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	}
	t.Logf("%s: deleted the roots", time.Now().Format(time.StampMilli))
	var left []string
	seen := map[string]bool{} // the AIBOMs seen while the collector works
	require.Eventually(t, func() bool {
		if _, err := runPods(ctx, ns, q.finish); err != nil && !isConflict(err) {
			require.NoError(t, err)
		}
		left = leftovers(t, ns, objs, q.roots)
		for _, a := range aibomSubjects(t, ns) {
			if !seen[a] {
				seen[a] = true
				t.Logf("%s: AIBOM of %s appeared while deleting; left: %v", time.Now().Format(time.StampMilli), a, left)
			}
		}
		return len(left) == 0
	}, eventually, tick, "the collector deletes every pod and the controller every AIBOM in %s; left: %v", ns, &left)
	require.NoError(t, controller.WaitSettled(3*time.Second, eventually))
	since := controller.Requests.Since(before)
	require.Zero(t, since["POST aiboms"], "no AIBOM for a child of a deleted owner: %v; AIBOMs seen meanwhile: %v", harness.Writes(since), seen)
	require.Equal(t, len(q.roots), since["DELETE aiboms"], "the roots' AIBOMs and nothing else: %v", harness.Writes(since))
	requireConservation(t, ns)
	r.pass("delete")

	// Re-created, the documents come back as they were.
	apply(t, ns, objs)
	waitDocuments(t, ns, q)
	requireConservation(t, ns)
	r.pass("re-create")

	// Nothing left behind for the next operator's test.
	deleteRoots(t, ns, objs, q.roots)
	return r
}

// deleteRoots deletes the roots (background) and waits until their
// children, pods and AIBOMs are gone.
func deleteRoots(t testing.TB, ns string, objs []*unstructured.Unstructured, roots []root) {
	t.Helper()
	ctx := context.Background()
	for _, rt := range roots {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvkOf(objs, rt.gk))
		obj.SetNamespace(ns)
		obj.SetName(rt.name)
		require.NoError(t, client.IgnoreNotFound(env.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))))
	}
	var left []string
	require.Eventually(t, func() bool {
		_, _ = runPods(ctx, ns, nil)
		left = leftovers(t, ns, objs, roots)
		return len(left) == 0
	}, eventually, tick, "%s cleaned up; left: %v", ns, &left)
}

func gvkOf(objs []*unstructured.Unstructured, gk schema.GroupKind) schema.GroupVersionKind {
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == gk {
			return o.GroupVersionKind()
		}
	}
	panic("no sample object of kind " + gk.String())
}

func requireConservation(t testing.TB, ns string) {
	t.Helper()
	require.NoError(t, env.Conservation(controller, ns).Verify(context.Background()))
}

// waitDocuments runs the pods of ns as they appear and waits until the
// AIBOMs of ns are those of q.roots exactly, each as expected; at the
// deadline it fails with what differs.
func waitDocuments(t testing.TB, ns string, q *qualification) map[string]observed {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * eventually)
	var last error
	for {
		if _, err := runPods(ctx, ns, q.finish); err != nil && !isConflict(err) {
			require.NoError(t, err)
		}
		got, err := checkDocuments(ctx, ns, q.roots)
		if err == nil {
			return got
		}
		last = err
		if time.Now().After(deadline) {
			require.FailNow(t, "the documents are not what a user expects", "%s@%s samples %v in %s:\n%v",
				q.op.module, q.op.info(t).Version, q.samples, ns, last)
		}
		time.Sleep(tick)
	}
}

func isConflict(err error) bool {
	return strings.Contains(err.Error(), "the object has been modified") || strings.Contains(err.Error(), "not found")
}

// observed is what a root's document says (for docs/compatibility.md).
type observed struct {
	owned   []string
	summary v1alpha1.Summary
	view    view
}

// checkDocuments compares the AIBOMs of ns with roots; the error lists
// every difference.
func checkDocuments(ctx context.Context, ns string, roots []root) (map[string]observed, error) {
	var list v1alpha1.AIBOMList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	byKey := map[string]*v1alpha1.AIBOM{}
	for i := range list.Items {
		a := &list.Items[i]
		byKey[a.Spec.Subject.Kind+"/"+a.Spec.Subject.Name] = a
	}
	var problems []string
	out := map[string]observed{}
	want := map[string]bool{}
	for _, rt := range roots {
		key := rt.gk.Kind + "/" + rt.name
		want[key] = true
		a := byKey[key]
		if a == nil {
			problems = append(problems, fmt.Sprintf("no AIBOM for %s %s", rt.gk, rt.name))
			continue
		}
		v, err := documentView(a)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[key] = observed{owned: a.Status.Absorbed, summary: a.Status.Summary, view: v}
		for _, p := range rt.check(a, v) {
			problems = append(problems, key+": "+p)
		}
	}
	for key := range byKey {
		if !want[key] {
			problems = append(problems, "an AIBOM for "+key+", which is not a root the samples create (a child reported on its own?)")
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return out, errors.New(strings.Join(problems, "\n"))
	}
	return out, nil
}

// check lists how a's document differs from what rt expects.
func (rt root) check(a *v1alpha1.AIBOM, v view) []string {
	var p []string
	if !ownedMatch(rt.owned, a.Status.Absorbed) {
		p = append(p, fmt.Sprintf("owned %v, want %v", a.Status.Absorbed, rt.owned))
	}
	if a.Status.Summary.Runtime != rt.runtime {
		p = append(p, fmt.Sprintf("runtime %q, want %q", a.Status.Summary.Runtime, rt.runtime))
	}
	if m := names(v.Models); !sameSet(m, rt.models) {
		p = append(p, fmt.Sprintf("models %v, want %v", m, rt.models))
	}
	for _, c := range []struct {
		what       string
		have, want []string
	}{{"framework", v.Frameworks, rt.frameworks}, {"application", v.Applications, rt.applications}, {"data", v.Data, rt.data}} {
		for _, w := range c.want {
			if !slices.Contains(names(c.have), w) {
				p = append(p, fmt.Sprintf("no %s %q among %v", c.what, w, c.have))
			}
		}
	}
	for _, n := range rt.notApplications {
		if slices.Contains(names(v.Applications), n) {
			p = append(p, fmt.Sprintf("an application %q it does not run (%v)", n, v.Applications))
		}
	}
	for image, pods := range rt.running {
		want := "sha256:" + imageDigest(image) + "=" + fmt.Sprint(pods)
		found := false
		for _, l := range v.Running {
			found = found || slices.Contains(l, want)
		}
		if !found {
			p = append(p, fmt.Sprintf("the digest of %s is not listed running on %d pods: %v", image, pods, v.String()))
		}
	}
	return p
}

// ownedMatch: every want pattern matches exactly one absorbed identity and
// every identity one pattern.
func ownedMatch(want, got []string) bool {
	if len(want) != len(got) {
		return false
	}
	used := make([]bool, len(got))
	for _, w := range want {
		ok := false
		for i, g := range got {
			if m, _ := path.Match(w, g); m && !used[i] {
				used[i], ok = true, true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

func aibomSubjects(t testing.TB, ns string) []string {
	var list v1alpha1.AIBOMList
	require.NoError(t, env.Client.List(context.Background(), &list, client.InNamespace(ns)))
	var out []string
	for _, a := range list.Items {
		out = append(out, a.Spec.Subject.Kind+"/"+a.Spec.Subject.Name)
	}
	sort.Strings(out)
	return out
}

func documentSHAs(t testing.TB, ns string) map[string]string {
	var list v1alpha1.AIBOMList
	require.NoError(t, env.Client.List(context.Background(), &list, client.InNamespace(ns)))
	out := map[string]string{}
	for _, a := range list.Items {
		out[a.Name] = a.Status.DocumentSHA256
	}
	return out
}

// leftovers lists the roots, pods and AIBOMs still in ns.
func leftovers(t testing.TB, ns string, objs []*unstructured.Unstructured, roots []root) []string {
	ctx := context.Background()
	var out []string
	for _, rt := range roots {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvkOf(objs, rt.gk))
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: rt.name}, obj); err == nil {
			out = append(out, fmt.Sprintf("%s %s (finalizers %v)", rt.gk.Kind, rt.name, obj.GetFinalizers()))
		}
	}
	var pods corev1.PodList
	require.NoError(t, env.Client.List(ctx, &pods, client.InNamespace(ns)))
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("Pod %s (finalizers %v)", p.Name, p.Finalizers))
	}
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(ns)))
	for _, j := range jobs.Items {
		var refs []string
		for _, r := range j.OwnerReferences {
			refs = append(refs, r.Kind+"/"+r.Name)
		}
		out = append(out, fmt.Sprintf("Job %s (owners %v, finalizers %v, deleting %v)", j.Name, refs, j.Finalizers, j.DeletionTimestamp != nil))
	}
	for _, a := range aibomSubjects(t, ns) {
		out = append(out, "AIBOM of "+a)
	}
	return out
}

func sampleOf(objs []*unstructured.Unstructured, rt root) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == rt.gk && o.GetName() == rt.name {
			return o
		}
	}
	panic("no sample object " + rt.gk.String() + " " + rt.name)
}

// waitCollectorKnows waits until kube-controller-manager's garbage
// collector watches the kind of sample. It discovers the kinds of new CRDs
// at its periodic sync (every 30s); until then it does not see an owner of
// that kind go, and the children of a deleted owner dangle for as long
// (longer than the controller's grace, so that they would report on their
// own: a known limit when an owner is deleted within about 30s of its
// CRD's creation). The probe: a copy of the sample in a namespace the
// controller does not watch, owning a ConfigMap; once the collector
// deletes the ConfigMap after the probe's deletion, it knows the kind.
func waitCollectorKnows(t testing.TB, sample *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	const ns = "gc-probe"
	ensureNamespace(t, ns)
	probe := sample.DeepCopy()
	probe.SetNamespace(ns)
	probe.SetName(fmt.Sprintf("probe-%d", time.Now().UnixNano()%1e9))
	require.NoError(t, env.Client.Create(ctx, probe))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: probe.GetName(), Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
		APIVersion: probe.GetAPIVersion(), Kind: probe.GetKind(), Name: probe.GetName(), UID: probe.GetUID()}}}}
	require.NoError(t, env.Client.Create(ctx, cm))
	require.NoError(t, env.Client.Delete(ctx, probe, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	start := time.Now()
	require.Eventually(t, func() bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		return err != nil && client.IgnoreNotFound(err) == nil
	}, 2*eventually, tick, "the garbage collector learns the kind %s", sample.GroupVersionKind())
	t.Logf("the garbage collector knows %s (after %s)", sample.GroupVersionKind().Kind, time.Since(start).Round(time.Second))
}

// ownerChains follows the controller references of every pod of ns up to
// the object without one, and returns the distinct chains of kinds, e.g.
// "LeaderWorkerSet -> StatefulSet -> Pod -> StatefulSet -> Pod", as the
// operators and Kubernetes' controllers built them.
func ownerChains(t testing.TB, ns string) []string {
	t.Helper()
	ctx := context.Background()
	var pods corev1.PodList
	require.NoError(t, env.Client.List(ctx, &pods, client.InNamespace(ns)))
	seen := map[string]bool{}
	var out []string
	for i := range pods.Items {
		var obj metav1.Object = &pods.Items[i]
		chain := []string{"Pod"}
		for depth := 0; depth < 10; depth++ {
			ref := metav1.GetControllerOf(obj)
			if ref == nil {
				break
			}
			chain = append([]string{ref.Kind}, chain...)
			owner := &unstructured.Unstructured{}
			owner.SetAPIVersion(ref.APIVersion)
			owner.SetKind(ref.Kind)
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, owner); err != nil {
				break
			}
			obj = owner
		}
		c := strings.Join(chain, " → ")
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
