package operators

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// Every scenario of this suite runs with the shipped permissions only: the
// controller of each control plane authenticates as the ServiceAccount of
// config/manager, and the API server enforces the shipped ClusterRole on it
// (a read outside the role and a write to a workload are refused).
func TestControllerRunsAsTheShippedServiceAccount(t *testing.T) {
	ctx := context.Background()
	for _, c := range []*cluster{beta, alpha} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.controller.Manager.GetConfig()
			require.Equal(t, "system:serviceaccount:aibom-system:aibom-controller", cfg.Impersonate.UserName,
				"the ServiceAccount of config/manager, as shipped")

			as, err := client.New(cfg, client.Options{Scheme: harness.Scheme()})
			require.NoError(t, err)
			review := &authenticationv1.SelfSubjectReview{}
			require.NoError(t, as.Create(ctx, review))
			require.Equal(t, c.rbac.Username(), review.Status.UserInfo.Username)
			require.Contains(t, review.Status.UserInfo.Groups, "system:serviceaccounts:aibom-system")
			require.NotContains(t, review.Status.UserInfo.Groups, "system:masters")

			err = as.List(ctx, &corev1.SecretList{})
			require.True(t, apierrors.IsForbidden(err), "secrets are not in the shipped role: %v", err)

			ns := c.newNamespace(t)
			objs := c.env.MustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: probe}
spec:
  selector: {matchLabels: {app: probe}}
  template:
    metadata: {labels: {app: probe}}
    spec: {containers: [{name: main, image: "`+vllmImage+`"}]}
`)
			patched := objs[0].DeepCopy()
			patched.SetLabels(map[string]string{"touched": "yes"})
			err = as.Patch(ctx, patched, client.MergeFrom(objs[0]))
			require.True(t, apierrors.IsForbidden(err), "workloads are read-only to the controller: %v", err)
			// Reading is allowed, and the controller reports the workload.
			require.NoError(t, as.Get(ctx, client.ObjectKeyFromObject(objs[0]), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}))
			c.waitAIBOM(t, ns, deploymentGK, "probe", nil)
		})
	}
}
