package badinput

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

const ollamaImage = "ollama/ollama:0.3.14"

// deploymentChain renders a Deployment "name" running image, its
// ReplicaSet and one running pod with the given digest.
func deploymentChain(name, image, digest string) string {
	rs := name + "-5c7b9"
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: main, image: %[2]q}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: %[3]s
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: %[1]s, pod-template-hash: 5c7b9}}
  template:
    metadata: {labels: {app: %[1]s, pod-template-hash: 5c7b9}}
    spec: {containers: [{name: main, image: %[2]q}]}
---`, name, image, rs) + runningPod(rs+"-a1", fmt.Sprintf("{app: %s, pod-template-hash: 5c7b9}", name),
		fmt.Sprintf("[{apiVersion: apps/v1, kind: ReplicaSet, name: %s, controller: true, blockOwnerDeletion: true}]", rs), image, digest)
}

// ownerRef renders a controller ownerReference with an explicit UID.
func ownerRef(apiVersion, kind, name, uid string) string {
	return fmt.Sprintf("[{apiVersion: %s, kind: %s, name: %s, uid: %s, controller: true, blockOwnerDeletion: true}]", apiVersion, kind, name, uid)
}

// An ownerReference naming, by UID, an object in another namespace is
// invalid in Kubernetes (owners are in the dependent's namespace) and must
// be ignored: the walk looks the owner up in the child's own namespace, by
// name, and checks the UID. In namespace B, where no object has the name, a
// StatefulSet whose reference names A's Deployment by name and UID is its
// own root; in namespace C, where a Deployment of that name exists with
// another UID, too (and C's Deployment does not absorb it). A pod in B that
// names A's ReplicaSet is never attributed to A's Deployment, whose AIBOM
// absorbs nothing and carries only its own pod's digest.
func TestCrossNamespaceOwnerReferenceIsIgnored(t *testing.T) {
	nsA, nsB, nsC := newNamespace(t), newNamespace(t), newNamespace(t)
	ownDigest := digestOf("cross-namespace-own")
	objs := env.MustApply(t, nsA, deploymentChain("web", vllmImage, ownDigest))
	webUID, rsUID := string(objs[0].GetUID()), string(objs[1].GetUID())
	waitAIBOM(t, nsA, deploymentGK, "web", readyWith(ownDigest))

	statefulSet := func(name, refs, digest string) string {
		return fmt.Sprintf(`
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: %[1]s
  ownerReferences: %[2]s
spec:
  serviceName: %[1]s
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: main, image: %[3]q}]}
---`, name, refs, ollamaImage) + runningPod(name+"-0", fmt.Sprintf("{app: %s}", name),
			ownerRef("apps/v1", "StatefulSet", name, "PLACEHOLDER"), ollamaImage, digest)
	}
	resolve := func(yaml string) string { return strings.ReplaceAll(yaml, "uid: PLACEHOLDER, ", "") }

	dbB, dbC := lowDigest(1), lowDigest(2)
	strayPod := lowDigest(3)
	env.MustApply(t, nsB, resolve(statefulSet("db", ownerRef("apps/v1", "Deployment", "web", webUID), dbB))+"---"+
		runningPod("web-5c7b9-stray", "{app: web, pod-template-hash: 5c7b9}", ownerRef("apps/v1", "ReplicaSet", "web-5c7b9", rsUID), vllmImage, strayPod))
	env.MustApply(t, nsC, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: "`+vllmImage+`"}]}
---`+resolve(statefulSet("db", ownerRef("apps/v1", "Deployment", "web", webUID), dbC)))

	b := waitAIBOM(t, nsB, statefulSetGK, "db", readyWith(dbB))
	require.Empty(t, b.Status.Absorbed)
	c := waitAIBOM(t, nsC, statefulSetGK, "db", readyWith(dbC))
	require.Empty(t, c.Status.Absorbed)
	cWeb := waitAIBOM(t, nsC, deploymentGK, "web", ready)
	require.Empty(t, cWeb.Status.Absorbed, "a same-named Deployment with another UID adopts nothing")
	require.NotContains(t, cWeb.Status.Document, dbC)

	// A's Deployment, rebuilt after everything above exists (a new running
	// digest on its own pod), still owns only its own.
	newDigest := digestOf("cross-namespace-own-2")
	setPodDigest(t, nsA, "web-5c7b9-a1", vllmImage, newDigest)
	a := waitAIBOM(t, nsA, deploymentGK, "web", readyWith(newDigest))
	require.Empty(t, a.Status.Absorbed)
	for _, d := range []string{dbB, dbC, strayPod} {
		require.NotContains(t, a.Status.Document, d)
	}
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
}

// Tenant isolation, on a plain Deployment chain: a pod that carries the
// workload's pod labels (app, pod-template-hash) but no ownerReference, and
// a pod whose controller reference names the workload's ReplicaSet by name
// with a forged UID, are never attributed: their running digests (which
// sort first, and would win digest resolution had they been attributed)
// never appear in the Deployment's document, whose digest is its own pod's,
// read as an observed fact. Attribution follows UID-checked controller
// references only, never labels. (A tenant pod on a foreign chain with a
// Dynamo graph's label is TestGroveForeignPodWithGraphLabelIsExcluded in
// test/envtest/operators; a stale UID after an owner's re-creation is
// TestRecreatedOwnerDoesNotAdoptTheStaleChild in test/envtest.)
func TestTenantPodsImitatingAWorkloadAreNeverAttributed(t *testing.T) {
	ns := newNamespace(t)
	own := digestOf("tenant-own")
	env.MustApply(t, ns, deploymentChain("llm", vllmImage, own))
	orphan, forged := lowDigest(11), lowDigest(12)
	env.MustApply(t, ns, runningPod("llm-5c7b9-orphan", "{app: llm, pod-template-hash: 5c7b9}", "[]", vllmImage, orphan)+"---"+
		runningPod("llm-5c7b9-forged", "{app: llm, pod-template-hash: 5c7b9}",
			ownerRef("apps/v1", "ReplicaSet", "llm-5c7b9", "00000000-0000-4000-8000-00000000f0f0"), vllmImage, forged))

	// The pods informer delivers events in order: once the controller has
	// seen this later change of the workload's own pod, it has seen the
	// tenant pods too.
	own2 := digestOf("tenant-own-2")
	setPodDigest(t, ns, "llm-5c7b9-a1", vllmImage, own2)
	a := waitAIBOM(t, ns, deploymentGK, "llm", readyWith(own2))
	require.NotContains(t, a.Status.Document, orphan)
	require.NotContains(t, a.Status.Document, forged)
	main := containerProperties(t, a.Status.Document, "main")
	require.Equal(t, "pods/llm-5c7b9-a1.status.containerStatuses[name=main].imageID", main["aibom.digest.locator"])
	require.Equal(t, "declared", main["aibom.digest.confidence"], "one attributed pod: the digest is observed, not a tie between pods")
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
	require.Empty(t, a.Status.Absorbed)

	// The orphan (nothing controls it) is a bare pod: its own root, never
	// the workload's. The forged one names a ReplicaSet by a UID that is not
	// the ReplicaSet's: a broken reference, in no AIBOM at all.
	orphanKey := client.ObjectKey{Namespace: ns, Name: reconcile.AIBOMName(schema.GroupKind{Kind: "Pod"}, "llm-5c7b9-orphan")}
	require.Eventually(t, func() bool {
		b := &v1alpha1.AIBOM{}
		return env.Client.Get(t.Context(), orphanKey, b) == nil && strings.Contains(b.Status.Document, orphan) && !strings.Contains(b.Status.Document, forged)
	}, 30*time.Second, 100*time.Millisecond, "the orphan pod reports itself")
	list := &v1alpha1.AIBOMList{}
	require.NoError(t, env.Client.List(t.Context(), list))
	for _, item := range list.Items {
		if item.Namespace == ns {
			require.Contains(t, []string{"llm", "llm-5c7b9-orphan"}, item.Spec.Subject.Name)
		}
	}
}

// containerProperties returns the properties of the document's one
// container component with that container name.
func containerProperties(t *testing.T, doc, name string) map[string]string {
	t.Helper()
	var bom struct {
		Components []struct {
			Type       string                         `json:"type"`
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &bom))
	var found []map[string]string
	for _, c := range bom.Components {
		props := map[string]string{}
		named := false
		for _, p := range c.Properties {
			props[p.Name] = p.Value
			if p.Name == "aibom.container.name" && p.Value == name {
				named = true // a component names every container running its image
			}
		}
		if c.Type == "container" && named {
			found = append(found, props)
		}
	}
	require.Len(t, found, 1, "container %q in %s", name, doc)
	return found[0]
}
