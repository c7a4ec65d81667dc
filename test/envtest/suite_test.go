package envtest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var err error
	env, err = harness.StartEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer env.Stop()
	controller, err = env.StartController(apps.New(), batch.New())
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest: start controller:", err)
		return 1
	}
	defer controller.Stop()
	return m.Run()
}

const (
	eventually = 30 * time.Second
	tick       = 100 * time.Millisecond
)

// newNamespace creates a fresh namespace, opted in or not.
func newNamespace(t *testing.T, optedIn bool) string {
	t.Helper()
	return env.NewNamespace(t, "t", optedIn)
}

var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	jobGK         = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobGK     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
)

// waitAIBOM waits until the AIBOM exists and cond holds, and returns it.
func waitAIBOM(t *testing.T, key client.ObjectKey, cond func(*v1alpha1.AIBOM) bool) *v1alpha1.AIBOM {
	t.Helper()
	var got *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		if err := env.Client.Get(context.Background(), key, a); err != nil {
			return false
		}
		if meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady) == nil {
			return false
		}
		got = a
		return cond == nil || cond(a)
	}, eventually, tick, "AIBOM %s never satisfied the condition", key)
	return got
}

// waitNoAIBOM waits until the AIBOM is gone.
func waitNoAIBOM(t *testing.T, key client.ObjectKey) {
	t.Helper()
	require.Eventually(t, func() bool {
		err := env.Client.Get(context.Background(), key, &v1alpha1.AIBOM{})
		return apierrors.IsNotFound(err)
	}, eventually, tick, "AIBOM %s still exists", key)
}

// requireNoAIBOMFor checks that no AIBOM appears for a key over a short window
// in which the controller provably processed the namespace (the caller waits
// on a sibling first).
func requireNoAIBOMFor(t *testing.T, key client.ObjectKey) {
	t.Helper()
	err := env.Client.Get(context.Background(), key, &v1alpha1.AIBOM{})
	require.True(t, apierrors.IsNotFound(err), "unexpected AIBOM %s (err %v)", key, err)
}
