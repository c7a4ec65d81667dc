package faults

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// gizmoCRD serves Gizmo v1 in the test group.
func gizmoCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos." + gizmoGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gizmoGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gizmo", ListKind: "GizmoList", Plural: "gizmos", Singular: "gizmo"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}

var gizmoTree = `
apiVersion: ` + gizmoGroup + `/v1
kind: Gizmo
metadata: {name: g}
spec:
  template:
    spec:
      containers: [{name: worker, image: "` + vllmImage + `", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: g-workers
  ownerReferences: [{apiVersion: ` + gizmoGroup + `/v1, kind: Gizmo, name: g, controller: true, blockOwnerDeletion: true}]
spec:
  serviceName: g
  selector: {matchLabels: {app: g}}
  template:
    metadata: {labels: {app: g}}
    spec: {containers: [{name: worker, image: "` + vllmImage + `"}]}
---` + harness.PodYAML("g-workers-0", "apps/v1", "StatefulSet", "g-workers", "worker", vllmImage, workerDigest)

// The CRD of an owner kind is deleted while its objects and their children
// exist. The API server deletes the Gizmo with its CRD; its StatefulSet,
// which no garbage collector removes, lingers with a reference to an owner
// whose kind is gone. The StatefulSet becomes a root with its own AIBOM and
// its pod's digest; the Gizmo's AIBOM is kept (objects deleted with their
// CRD keep their AIBOMs, docs/architecture.md), which the conservation check
// lists as retained.
func TestOwnerKindCRDDeletedWhileItsObjectsAndChildrenExist(t *testing.T) {
	ctx := context.Background()
	crd := gizmoCRD()
	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return controller.Supervisor.Healthy(gizmoGK) }, eventually, tick, "the supervisor never watched Gizmo")

	ns := newNamespace(t)
	env.MustApply(t, ns, gizmoTree)
	conservation(ns).Eventually(t, eventually)
	kept := requireEventuallyAIBOM(t, harness.AIBOMKey(ns, gizmoGK, "g"), workerDigest)
	require.Equal(t, []string{"StatefulSet.apps/g-workers"}, kept.Status.Absorbed)

	require.NoError(t, env.Client.Delete(ctx, crd))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{}))
	}, eventually, tick, "the CRD was never removed")

	root := requireEventuallyAIBOM(t, harness.AIBOMKey(ns, statefulSetGK, "g-workers"), workerDigest)
	require.Empty(t, root.Status.Absorbed)
	rep := conservation(ns).Eventually(t, eventually)
	require.Equal(t, 1, rep.Roots)
	require.True(t, slices.ContainsFunc(rep.Retained, func(s string) bool { return strings.HasPrefix(s, ns+"/"+kept.Name+" ") }),
		"the Gizmo's AIBOM is retained: %v", rep.Retained)
	settle(t, ns)
	still := getAIBOM(t, harness.AIBOMKey(ns, gizmoGK, "g"))
	require.NotNil(t, still, "the AIBOM of an object deleted with its CRD is kept")
	require.Equal(t, kept.UID, still.UID)

	// The CRD comes back without the Gizmo: once the kind's cache syncs,
	// the retained AIBOM's subject is known not to exist, and it goes. No
	// event names the Gizmo, so only the sync's replay of the kind's AIBOM
	// subjects can remove it.
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{gizmoCRD()}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, harness.AIBOMKey(ns, gizmoGK, "g"), &v1alpha1.AIBOM{}))
	}, eventually, tick, "the retained AIBOM of a Gizmo that is gone stays after its CRD was re-installed")
	rep = conservation(ns).Eventually(t, eventually)
	require.Empty(t, rep.Retained)
	require.NotNil(t, getAIBOM(t, harness.AIBOMKey(ns, statefulSetGK, "g-workers")), "the StatefulSet stays a root")
}
