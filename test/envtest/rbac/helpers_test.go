package rbac_test

// The control plane, the controller runs and the assertions shared by the
// degradation tests.

import (
	"bufio"
	"bytes"
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

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/test/envtest/harness"
	"github.com/aibom-dev/aibom/test/envtest/rbac"
)

var (
	env     *harness.Env
	shipped *rbac.Shipped
	logs    = &logBuffer{}
)

const (
	eventually = 60 * time.Second
	// recovery bounds how long a kind's informer takes to list again once
	// the permission is back: client-go's reflector retries a failed list
	// with jittered exponential backoff capped at 30s (up to 60s with jitter).
	recovery = 120 * time.Second
	tick     = 100 * time.Millisecond
)

func TestMain(m *testing.M) {
	// The controller's log lines are kept to count them. controller-runtime
	// takes the first logger set, so this must come before the harness sets
	// its own.
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.Level(zapcore.Level(-1)) /* V(1): the walk-miss lines */))
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = harness.StartEnv("test/crds/dynamo/v1beta1", "test/crds/grove", "test/crds/lws")
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if shipped, err = rbac.Load(); err == nil {
		err = shipped.Install(context.Background(), env.Client)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest: shipped RBAC:", err)
		return 1
	}
	return m.Run()
}

// logBuffer collects the controller's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// mark is the position of the next line.
func (b *logBuffer) mark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// lines returns the JSON log lines written since mark.
func (b *logBuffer) lines(since int) []map[string]any {
	b.mu.Lock()
	data := slices.Clone(b.buf.Bytes()[since:])
	b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := map[string]any{}
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			out = append(out, line)
		}
	}
	return out
}

// walkMissLogs counts the reconciler's "ownership walk could not pass an
// owner" lines for ownerKind and reason since mark.
func walkMissLogs(since int, ownerKind, reason string) int {
	n := 0
	for _, l := range logs.lines(since) {
		msg, _ := l["msg"].(string)
		if strings.HasPrefix(msg, "ownership walk could not pass an owner") && l["ownerKind"] == ownerKind && l["reason"] == reason {
			n++
		}
	}
	return n
}

func forbiddenMisses(kind string) float64 {
	return harness.MetricValue("aibom_rollup_unresolved_total", map[string]string{"kind": kind, "reason": graph.ReasonForbidden})
}

func watchErrors(kind string) float64 {
	return harness.MetricValue("aibom_watch_errors_total", map[string]string{"kind": kind})
}

// denied is a controller running as the shipped ServiceAccount whose
// ClusterRole lacks some resources of one group.
type denied struct {
	group     string
	resources []string
	restored  bool
}

// deny removes resources of group from the shipped ClusterRole on the
// control plane, waits until the authorizer refuses them, and starts a
// controller with every in-tree adapter as the ServiceAccount. Cleanup
// stops it, restores the shipped role and opts the test's namespaces out.
func deny(t *testing.T, group string, resources ...string) *denied {
	t.Helper()
	ctx := context.Background()
	reduced, err := rbac.Without(shipped.ClusterRole, group, resources...)
	require.NoError(t, err)
	setRules(t, reduced.Rules)
	d := &denied{group: group, resources: resources}
	for _, res := range resources {
		require.NoError(t, shipped.WaitAuthorized(ctx, env.Client, authorizationv1.ResourceAttributes{Verb: "list", Group: group, Resource: res}, false))
	}
	t.Cleanup(func() {
		if !d.restored {
			d.restore(t)
		}
	})

	c, err := env.StartControllerWith(harness.ControllerOptions{Config: shipped.Impersonating(env.Config)}, harness.InTreeAdapters()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	return d
}

// restore puts the shipped rules back and waits until the authorizer
// allows the resources again.
func (d *denied) restore(t *testing.T) {
	t.Helper()
	setRules(t, shipped.ClusterRole.Rules)
	for _, res := range d.resources {
		require.NoError(t, shipped.WaitAuthorized(context.Background(), env.Client, authorizationv1.ResourceAttributes{Verb: "list", Group: d.group, Resource: res}, true))
	}
	d.restored = true
}

func setRules(t *testing.T, rules []rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: shipped.ClusterRole.Name}, role))
	role.Rules = rules
	require.NoError(t, env.Client.Update(context.Background(), role))
}

// waitWatchErrors waits until the supervisor has seen a list of kind
// refused (the walk then classifies the kind's misses as forbidden).
func waitWatchErrors(t *testing.T, kind string, before float64) {
	t.Helper()
	require.Eventually(t, func() bool { return watchErrors(kind) > before }, eventually, tick, "no watch error for %s", kind)
	require.Zero(t, harness.MetricValue("aibom_watch_healthy", map[string]string{"kind": kind}))
}

// newNamespace creates an opted-in namespace. When the test ends it is
// opted out (envtest runs no namespace controller: a deleted namespace
// would stay terminating with its objects, still opted in), so that later
// tests' controllers have nothing to do there.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := env.NewNamespace(t, "r", true)
	t.Cleanup(func() {
		ns := &corev1.Namespace{}
		require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: name}, ns))
		ns.Labels[graph.OptInLabel] = "false"
		require.NoError(t, env.Client.Update(context.Background(), ns))
	})
	return name
}

var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	lwsGK         = schema.GroupKind{Group: "leaderworkerset.x-k8s.io", Kind: "LeaderWorkerSet"}
	dgdGK         = schema.GroupKind{Group: "nvidia.com", Kind: "DynamoGraphDeployment"}
)

// waitAIBOM waits until the AIBOM of (gk, name) is Ready and cond holds.
func waitAIBOM(t *testing.T, ns string, gk schema.GroupKind, name string, within time.Duration, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	key := harness.AIBOMKey(ns, gk, name)
	var mu sync.Mutex
	var got, last *v1alpha1.AIBOM
	ok := assertEventually(func() bool {
		a := &v1alpha1.AIBOM{}
		if env.Client.Get(context.Background(), key, a) != nil {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		last = a
		ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || (cond != nil && !cond(a)) {
			return false
		}
		got = a
		return true
	}, within)
	mu.Lock()
	defer mu.Unlock()
	if !ok {
		if last == nil {
			t.Fatalf("AIBOM %s of %s %s never appeared", key.Name, gk.Kind, name)
		}
		t.Fatalf("AIBOM %s of %s %s never satisfied the condition; last seen: absorbed=%v conditions=%+v document=%s",
			key.Name, gk.Kind, name, last.Status.Absorbed, last.Status.Conditions, last.Status.Document)
	}
	return got
}

func assertEventually(cond func() bool, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(tick)
	}
}

// waitOnlyAIBOMs waits until the AIBOMs of ns are exactly want ("Kind/name"
// of their subjects).
func waitOnlyAIBOMs(t *testing.T, ns string, within time.Duration, want ...string) {
	t.Helper()
	sort.Strings(want)
	var got []string
	ok := assertEventually(func() bool {
		list := &v1alpha1.AIBOMList{}
		if env.Client.List(context.Background(), list, client.InNamespace(ns)) != nil {
			return false
		}
		var subjects []string
		for _, a := range list.Items {
			subjects = append(subjects, a.Spec.Subject.Kind+"/"+a.Spec.Subject.Name)
		}
		sort.Strings(subjects)
		got = subjects
		return slices.Equal(want, got)
	}, within)
	require.True(t, ok, "AIBOMs in %s: want %v, got %v", ns, want, got)
}

// digestOf returns the resolved digest ("" when unresolved) of the
// document's container of that name (and group, unless ""), and whether it
// is there.
func digestOf(a *v1alpha1.AIBOM, group, name string) (string, bool) {
	var bom struct {
		Components []struct {
			Type   string `json:"type"`
			Hashes []struct {
				Content string `json:"content"`
			} `json:"hashes"`
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"components"`
	}
	if json.Unmarshal([]byte(a.Status.Document), &bom) != nil {
		return "", false
	}
	for _, c := range bom.Components {
		if c.Type != "container" {
			continue
		}
		// The i-th container name goes with the i-th group.
		var names, groups []string
		for _, p := range c.Properties {
			switch p.Name {
			case "aibom.container.name":
				names = append(names, p.Value)
			case "aibom.container.group":
				groups = append(groups, p.Value)
			}
		}
		for i, cname := range names {
			cgroup := ""
			if i < len(groups) {
				cgroup = groups[i]
			}
			if cname != name || (group != "" && cgroup != group) {
				continue
			}
			if len(c.Hashes) == 0 {
				return "", true
			}
			return c.Hashes[0].Content, true
		}
	}
	return "", false
}

// hasDigest is a waitAIBOM condition: the container's digest is d ("" for
// unresolved).
func hasDigest(group, name, d string) func(*v1alpha1.AIBOM) bool {
	return func(a *v1alpha1.AIBOM) bool {
		got, ok := digestOf(a, group, name)
		return ok && got == d
	}
}

// absorbs is a waitAIBOM condition: status.absorbed is exactly want.
func absorbs(want ...string) func(*v1alpha1.AIBOM) bool {
	return func(a *v1alpha1.AIBOM) bool {
		return slices.Equal(want, a.Status.Absorbed) && a.Status.AbsorbedCount == len(want)
	}
}

// all is a waitAIBOM condition: every cond holds.
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
