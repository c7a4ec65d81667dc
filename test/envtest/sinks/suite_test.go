// Package sinks tests the AIBOMConfig and the sinks end to end: the real
// manager against a real kube-apiserver, real HTTPS, registry and
// Dependency-Track stand-ins on loopback.
package sinks

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/configuration"
	"github.com/aibom-dev/aibom/pkg/sink"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var env *harness.Env

// controllerNS is the controller's namespace: Secrets are read there only.
const controllerNS = "aibom-system"

const (
	eventually = 60 * time.Second
	tick       = 100 * time.Millisecond
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = harness.StartEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer env.Stop()
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controllerNS}}); err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	return m.Run()
}

// fastDelivery retries quickly, so that an outage of seconds exhausts the
// budget (the behaviour is that of minutes with the defaults).
func fastDelivery() sink.Options {
	return sink.Options{QueueCapacity: 100, AttemptTimeout: 2 * time.Second, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, MaxElapsed: time.Second}
}

// loopbackDestinations opts the suite's receivers, all on 127.0.0.1, in:
// loopback is refused by default.
var loopbackDestinations = []string{"127.0.0.0/8"}

func startController(t *testing.T, delivery sink.Options) *harness.Controller {
	t.Helper()
	c, err := env.StartControllerWith(harness.ControllerOptions{Sinks: &configuration.Options{
		Namespace: controllerNS, Delivery: delivery, RedeliverInterval: 300 * time.Millisecond,
	}}, apps.New(), batch.New())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

// applyConfig creates or replaces the AIBOMConfig's spec.
func applyConfig(t *testing.T, spec v1alpha1.AIBOMConfigSpec) *v1alpha1.AIBOMConfig {
	t.Helper()
	ctx := context.Background()
	cfg := &v1alpha1.AIBOMConfig{}
	err := env.Client.Get(ctx, client.ObjectKey{Name: v1alpha1.ConfigName}, cfg)
	if apierrors.IsNotFound(err) {
		cfg = &v1alpha1.AIBOMConfig{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ConfigName}, Spec: spec}
		require.NoError(t, env.Client.Create(ctx, cfg))
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), &v1alpha1.AIBOMConfig{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ConfigName}})
		})
		return cfg
	}
	require.NoError(t, err)
	cfg.Spec = spec
	require.NoError(t, env.Client.Update(ctx, cfg))
	return cfg
}

// waitConfig waits until the AIBOMConfig's status is about its current
// generation and cond holds.
func waitConfig(t *testing.T, cond func(*v1alpha1.AIBOMConfig) bool) *v1alpha1.AIBOMConfig {
	t.Helper()
	var got *v1alpha1.AIBOMConfig
	require.Eventually(t, func() bool {
		c := &v1alpha1.AIBOMConfig{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: v1alpha1.ConfigName}, c); err != nil {
			return false
		}
		got = c
		return c.Status.ObservedGeneration == c.Generation && cond(c)
	}, eventually, tick)
	return got
}

func secret(t *testing.T, name string, data map[string][]byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNS, Name: name}, Data: data}
	require.NoError(t, env.Client.Create(context.Background(), s))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), s) })
}

func getAIBOM(key client.ObjectKey) (*v1alpha1.AIBOM, bool) {
	a := &v1alpha1.AIBOM{}
	if err := env.Client.Get(context.Background(), key, a); err != nil {
		return nil, false
	}
	return a, true
}

func condition(a *v1alpha1.AIBOM, typ string) *metav1.Condition {
	return meta.FindStatusCondition(a.Status.Conditions, typ)
}

func isTrue(c *metav1.Condition) bool { return c != nil && c.Status == metav1.ConditionTrue }
