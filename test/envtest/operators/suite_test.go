// Package operators is the envtest suite for the ownership roll-up of the
// operator kinds (Design 005, Testing): the chains the Dynamo, Grove,
// LeaderWorkerSet and NIM operators build, created parent-first with real
// UIDs against minimal test CRDs, with pod status written as a kubelet would.
//
// envtest serves no conversion webhook, so the two Dynamo API versions get a
// control plane each: "beta" serves nvidia.com v1beta1 with the Grove, LWS
// and NIM CRDs (and those of KServe, KubeRay and Kubeflow Trainer), "alpha"
// serves nvidia.com v1alpha1 only. Each runs its own
// controller with every in-tree adapter.
//
// Least privilege end to end: each control plane gets the shipped RBAC
// (config/rbac, read from the repository), and its controller runs as the
// ServiceAccount of config/manager through impersonation, so that every
// scenario of the suite passes with exactly the shipped ClusterRole. The
// tests' own client stays an administrator.
package operators

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/test/envtest/harness"
	"github.com/aibom-dev/aibom/test/envtest/rbac"
)

// cluster is one control plane and the controller running against it.
type cluster struct {
	name       string
	env        *harness.Env
	controller *harness.Controller
	// rbac is what the controller runs as: the shipped ServiceAccount bound
	// to the shipped ClusterRole.
	rbac *rbac.Shipped
}

var (
	// beta serves nvidia.com v1beta1, grove.io, LWS and NIM.
	beta *cluster
	// alpha serves nvidia.com v1alpha1 only (no Grove, LWS or NIM CRDs).
	alpha *cluster
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var err error
	beta, err = startCluster("beta", "test/crds/dynamo/v1beta1", "test/crds/grove", "test/crds/lws", "test/crds/nim",
		"test/crds/kserve", "test/crds/kuberay", "test/crds/trainer")
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer beta.stop()
	alpha, err = startCluster("alpha", "test/crds/dynamo/v1alpha1")
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer alpha.stop()
	return m.Run()
}

func startCluster(name string, crdDirs ...string) (*cluster, error) {
	env, err := harness.StartEnv(crdDirs...)
	if err != nil {
		return nil, fmt.Errorf("%s control plane: %w", name, err)
	}
	shipped, err := rbac.Load()
	if err == nil {
		err = shipped.Install(context.Background(), env.Client)
	}
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("%s shipped RBAC: %w", name, err)
	}
	ctrl, err := env.StartControllerWith(harness.ControllerOptions{Config: shipped.Impersonating(env.Config)}, harness.InTreeAdapters()...)
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("%s controller: %w", name, err)
	}
	return &cluster{name: name, env: env, controller: ctrl, rbac: shipped}, nil
}

func (c *cluster) stop() {
	if err := c.controller.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "envtest: stop %s controller: %v\n", c.name, err)
	}
	if err := c.env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "envtest: stop %s control plane: %v\n", c.name, err)
	}
}

const (
	eventually = 30 * time.Second
	tick       = 100 * time.Millisecond
)

// newNamespace creates a fresh namespace opted in to AIBOMs.
func (c *cluster) newNamespace(t *testing.T) string {
	t.Helper()
	return c.env.NewNamespace(t, "op", true)
}

// get reads the current state of obj.
func (c *cluster) get(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out := &unstructured.Unstructured{}
	out.SetGroupVersionKind(obj.GroupVersionKind())
	require.NoError(t, c.env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), out))
	return out
}

// waitAIBOM waits until the AIBOM of (gk, name) exists, is Ready and cond
// holds, and returns it.
func (c *cluster) waitAIBOM(t *testing.T, ns string, gk schema.GroupKind, name string, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	key := harness.AIBOMKey(ns, gk, name)
	var mu sync.Mutex
	var got, last *v1alpha1.AIBOM
	ok := assert.Eventually(noFail{}, func() bool {
		a := &v1alpha1.AIBOM{}
		if err := c.env.Client.Get(context.Background(), key, a); err != nil {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		last = a
		ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue {
			return false
		}
		got = a
		return cond == nil || cond(a)
	}, eventually, tick)
	mu.Lock()
	defer mu.Unlock()
	if !ok {
		if last != nil {
			t.Fatalf("AIBOM %s of %s %s never satisfied the condition; last seen: absorbed=%v conditions=%+v document=%s",
				key.Name, gk.Kind, name, last.Status.Absorbed, last.Status.Conditions, last.Status.Document)
		}
		t.Fatalf("AIBOM %s of %s %s never appeared", key.Name, gk.Kind, name)
	}
	return got
}

// noFail lets assert.Eventually report nothing itself: the caller fails
// the test with the last state it saw.
type noFail struct{}

func (noFail) Errorf(string, ...any) {}

// waitNoAIBOM waits until the AIBOM of (gk, name) does not exist.
func (c *cluster) waitNoAIBOM(t *testing.T, ns string, gk schema.GroupKind, name string) {
	t.Helper()
	key := harness.AIBOMKey(ns, gk, name)
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(c.env.Client.Get(context.Background(), key, &v1alpha1.AIBOM{}))
	}, eventually, tick, "AIBOM %s of %s %s still exists", key.Name, gk.Kind, name)
}

// waitOnlyAIBOMs waits until the AIBOMs in ns are exactly those of want,
// given as "Kind/name" of their subjects. Call it after a waitAIBOM on the
// root whose document covers every object, so that the controller has seen
// them all.
func (c *cluster) waitOnlyAIBOMs(t *testing.T, ns string, want ...string) {
	t.Helper()
	sort.Strings(want)
	var mu sync.Mutex
	var got []string
	ok := assert.Eventually(noFail{}, func() bool {
		list := &v1alpha1.AIBOMList{}
		if err := c.env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return false
		}
		var subjects []string
		for _, a := range list.Items {
			subjects = append(subjects, a.Spec.Subject.Kind+"/"+a.Spec.Subject.Name)
		}
		sort.Strings(subjects)
		mu.Lock()
		defer mu.Unlock()
		got = subjects
		return slices.Equal(want, got)
	}, eventually, tick)
	mu.Lock()
	defer mu.Unlock()
	require.True(t, ok, "AIBOMs in %s: want %v, got %v", ns, want, got)
}

var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	lwsGK         = schema.GroupKind{Group: "leaderworkerset.x-k8s.io", Kind: "LeaderWorkerSet"}
	dgdGK         = schema.GroupKind{Group: "nvidia.com", Kind: "DynamoGraphDeployment"}
	dcdGK         = schema.GroupKind{Group: "nvidia.com", Kind: "DynamoComponentDeployment"}
	nimGK         = schema.GroupKind{Group: "apps.nvidia.com", Kind: "NIMService"}
)

// Digests the fake kubelet reports. They are distinct, so that a document
// naming one proves which pod it was read from.
var (
	leaderDigest = digestOf("leader")
	workerDigest = digestOf("worker")
	decodeDigest = digestOf("decode")
	nimDigest    = digestOf("nim")
)

// lowDigest sorts before every digestOf value: a pod that must not be
// attributed carries it, because on a tie digest resolution picks the
// lexically smallest digest, so a wrong attribution would show.
const lowDigest = "0000000000000000000000000000000000000000000000000000000000000001"

func digestOf(label string) string {
	return "a" + harness.SHA256Hex(label)[1:] // never below lowDigest
}

// ctr is one container of a fake pod: its name, image and the digest the
// runtime reports ("" while the image is being pulled).
type ctr struct{ name, image, digest string }

// podYAML renders a pod controlled by (ownerAPIVersion, ownerKind, owner),
// with labels (a YAML flow map, may be empty) and a status as a kubelet
// writes it.
func podYAML(name, ownerAPIVersion, ownerKind, owner, labels string, containers ...ctr) string {
	if labels == "" {
		labels = "{}"
	}
	var spec, status strings.Builder
	for _, c := range containers {
		fmt.Fprintf(&spec, "\n    - {name: %s, image: %q}", c.name, c.image)
		repo := imageRepo(c.image)
		if c.digest == "" {
			fmt.Fprintf(&status, "\n    - {name: %s, image: %q, imageID: \"\", ready: false, restartCount: 0, state: {waiting: {reason: ContainerCreating}}}", c.name, c.image)
			continue
		}
		fmt.Fprintf(&status, "\n    - {name: %s, image: %q, imageID: \"%s@sha256:%s\", ready: true, restartCount: 0, state: {running: {}}}", c.name, c.image, repo, c.digest)
	}
	return fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: %s
  ownerReferences: [{apiVersion: %s, kind: %s, name: %s, controller: true, blockOwnerDeletion: true}]
spec:
  containers:%s
status:
  phase: Running
  containerStatuses:%s
`, name, labels, ownerAPIVersion, ownerKind, owner, spec.String(), status.String())
}

// imageRepo is the repository a runtime reports in imageID for image.
func imageRepo(image string) string {
	repo, _, _ := document.ParseImage(image)
	return repo
}

// containerDigest is what a document says about one container.
type containerDigest struct {
	name, group, image string
	// digest is the hex sha256 of the component's hash, "" when unresolved.
	digest, source, confidence, locator string
}

// docContainers returns the container components of a document.
func docContainers(t *testing.T, doc string) []containerDigest {
	t.Helper()
	out, err := parseContainers(doc)
	require.NoError(t, err)
	return out
}

// parseContainers reads the container components of a document; it is safe
// in a polled condition.
func parseContainers(doc string) ([]containerDigest, error) {
	var bom struct {
		Components []struct {
			Type    string `json:"type"`
			Name    string `json:"name"`
			Version string `json:"version"`
			Hashes  []struct {
				Content string `json:"content"`
			} `json:"hashes"`
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(doc), &bom); err != nil {
		return nil, err
	}
	var out []containerDigest
	for _, comp := range bom.Components {
		if comp.Type != "container" {
			continue
		}
		// A component names every container that runs its image: the i-th
		// aibom.container.name goes with the i-th aibom.container.group.
		var c containerDigest
		var names, groups []string
		if len(comp.Hashes) > 0 {
			c.digest = comp.Hashes[0].Content
		}
		c.image = comp.Name
		if comp.Version != "" {
			c.image += ":" + comp.Version
		}
		for _, p := range comp.Properties {
			switch p.Name {
			case "aibom.container.name":
				names = append(names, p.Value)
			case "aibom.container.group":
				groups = append(groups, p.Value)
			case "aibom.digest.source":
				c.source = p.Value
			case "aibom.digest.confidence":
				c.confidence = p.Value
			case "aibom.digest.locator":
				c.locator = p.Value
			}
		}
		for i, n := range names {
			one := c
			one.name = n
			if i < len(groups) {
				one.group = groups[i]
			}
			out = append(out, one)
		}
	}
	return out, nil
}

// container returns the document's container of that name (and group, when
// group is not ""), failing when there is not exactly one.
func container(t *testing.T, doc, group, name string) containerDigest {
	t.Helper()
	var found []containerDigest
	for _, c := range docContainers(t, doc) {
		if c.name == name && (group == "" || c.group == group) {
			found = append(found, c)
		}
	}
	require.Len(t, found, 1, "container %q (group %q) in %s", name, group, doc)
	return found[0]
}

// hasContainer is a waitAIBOM condition: the document has a container of
// that name (and group, when not "") for which match holds.
func hasContainer(group, name string, match func(containerDigest) bool) func(*v1alpha1.AIBOM) bool {
	return func(a *v1alpha1.AIBOM) bool {
		cs, err := parseContainers(a.Status.Document)
		if err != nil {
			return false
		}
		for _, c := range cs {
			if c.name == name && (group == "" || c.group == group) && match(c) {
				return true
			}
		}
		return false
	}
}

// hasDigest is a waitAIBOM condition: the container resolved digest d.
func hasDigest(group, name, d string) func(*v1alpha1.AIBOM) bool {
	return hasContainer(group, name, func(c containerDigest) bool { return c.digest == d })
}

// citesPod is a waitAIBOM condition: the container's digest is cited from
// the status named statusName of the given pod.
func citesPod(group, name, pod, statusName string) func(*v1alpha1.AIBOM) bool {
	locator := "pods/" + pod + ".status.containerStatuses[name=" + statusName + "].imageID"
	return hasContainer(group, name, func(c containerDigest) bool { return c.locator == locator })
}

// requireDigestFromPod checks that the container's digest is d, read from the
// status of the named pod, as an observed (declared) fact.
func requireDigestFromPod(t *testing.T, doc, group, name, d, pod, statusName string) {
	t.Helper()
	c := container(t, doc, group, name)
	require.Equal(t, d, c.digest, "digest of container %q (group %q)", name, group)
	require.Equal(t, string(adapter.SourcePodStatus), c.source)
	require.Equal(t, string(adapter.Declared), c.confidence, "the pods agree on one digest")
	require.Equal(t, "pods/"+pod+".status.containerStatuses[name="+statusName+"].imageID", c.locator)
}

// docOwned returns the aibom.rollup.owned.<i> values of a document, in
// index order, checking the indices are 0..n-1.
func docOwned(t *testing.T, doc string) []string {
	t.Helper()
	var bom struct {
		Metadata struct {
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &bom))
	var out []string
	for _, p := range bom.Metadata.Properties {
		if strings.HasPrefix(p.Name, "aibom.rollup.owned") {
			require.Equal(t, fmt.Sprintf("aibom.rollup.owned.%d", len(out)), p.Name)
			out = append(out, p.Value)
		}
	}
	return out
}

// requireAbsorbed checks status.absorbed, its count and the document's
// aibom.rollup.owned properties against want (sorted by kind, then name),
// and that the document validates against the CycloneDX 1.6 schema.
func requireAbsorbed(t *testing.T, a *v1alpha1.AIBOM, want ...string) {
	t.Helper()
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
	require.Equal(t, a.Status.DocumentSHA256, harness.SHA256Hex(a.Status.Document))
	if len(want) == 0 {
		require.Empty(t, a.Status.Absorbed)
		require.Zero(t, a.Status.AbsorbedCount)
		require.NotContains(t, a.Status.Document, "aibom.rollup.owned")
		return
	}
	require.Equal(t, want, a.Status.Absorbed)
	require.Equal(t, len(want), a.Status.AbsorbedCount)
	require.Equal(t, want, docOwned(t, a.Status.Document))
}

// absorbedLen is a waitAIBOM condition.
func absorbedLen(n int) func(*v1alpha1.AIBOM) bool {
	return func(a *v1alpha1.AIBOM) bool { return len(a.Status.Absorbed) == n }
}

func all(conds ...func(*v1alpha1.AIBOM) bool) func(*v1alpha1.AIBOM) bool {
	return func(a *v1alpha1.AIBOM) bool {
		for _, c := range conds {
			if !c(a) {
				return false
			}
		}
		return true
	}
}
