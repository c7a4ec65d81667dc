package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

const ns = "ml"

func objectMeta(name, uid string, owner client.Object) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}
	if owner != nil {
		gvk := owner.GetObjectKind().GroupVersionKind()
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}}
	}
	return m
}

// aibom is the AIBOM the controller writes for a root, consistent with
// itself: Ready, its document's subject and owned list, its hash.
func aibom(gk schema.GroupKind, apiVersion, name, uid string, absorbed ...string) *v1alpha1.AIBOM {
	props := []map[string]string{}
	for i, a := range absorbed {
		props = append(props, map[string]string{"name": fmt.Sprintf("aibom.rollup.owned.%d", i), "value": a})
	}
	doc, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"component": map[string]any{"name": name, "properties": []map[string]string{
			{"name": "aibom.workload.kind", "value": gk.Kind}, {"name": "aibom.workload.group", "value": gk.Group},
			{"name": "aibom.workload.namespace", "value": ns}, {"name": "aibom.workload.uid", "value": uid},
		}},
		"properties": props,
	}})
	sum := sha256.Sum256(doc)
	return &v1alpha1.AIBOM{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: reconcile.AIBOMName(gk, name)},
		Spec:       v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: apiVersion, Kind: gk.Kind, Name: name, UID: uid}},
		Status: v1alpha1.AIBOMStatus{
			Document: string(doc), DocumentSHA256: hex.EncodeToString(sum[:]), Absorbed: absorbed, AbsorbedCount: len(absorbed),
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonDocumentWritten}},
		},
	}
}

var (
	deployGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	jobGK    = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronGK   = schema.GroupKind{Group: "batch", Kind: "CronJob"}
)

func check(t *testing.T, objs ...client.Object) ConservationReport {
	t.Helper()
	reg, err := graph.NewRegistry(apps.New(), batch.New())
	require.NoError(t, err)
	all := append([]client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{graph.OptInLabel: "true"}}}}, objs...)
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(all...).WithStatusSubresource(&v1alpha1.AIBOM{}).Build()
	rep, err := Conservation{Reader: c, Registry: reg}.Check(context.Background())
	require.NoError(t, err)
	return rep
}

// The forest every case starts from: a Deployment with its ReplicaSet and
// Pod, and a CronJob controlling a Job.
func forest() (deploy *appsv1.Deployment, rs *appsv1.ReplicaSet, cron *batchv1.CronJob, job *batchv1.Job) {
	deploy = &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: objectMeta("web", "u-web", nil)}
	rs = &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}, ObjectMeta: objectMeta("web-1", "u-rs", deploy)}
	cron = &batchv1.CronJob{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"}, ObjectMeta: objectMeta("nightly", "u-cron", nil)}
	job = &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: objectMeta("nightly-1", "u-job", cron)}
	return
}

func TestConservationHolds(t *testing.T) {
	deploy, rs, cron, job := forest()
	rep := check(t, deploy, rs, cron, job,
		aibom(deployGK, "apps/v1", "web", "u-web"),
		aibom(cronGK, "batch/v1", "nightly", "u-cron", "Job.batch/nightly-1"))
	require.NoError(t, rep.Err())
	require.Equal(t, 3, rep.Workloads)
	require.Equal(t, 2, rep.Roots)
	require.Equal(t, 2, rep.AIBOMs)
}

// Each breach of the invariant is reported, readably.
func TestConservationReportsEveryViolation(t *testing.T) {
	deploy, rs, cron, job := forest()
	for _, tc := range []struct {
		name string
		objs []client.Object
		want string
	}{
		{"root without AIBOM", []client.Object{aibom(cronGK, "batch/v1", "nightly", "u-cron", "Job.batch/nightly-1")},
			"Deployment.apps ml/web (uid u-web) is a root without an AIBOM"},
		{"rolled-up workload with an AIBOM", []client.Object{aibom(deployGK, "apps/v1", "web", "u-web"), aibom(cronGK, "batch/v1", "nightly", "u-cron", "Job.batch/nightly-1"), aibom(jobGK, "batch/v1", "nightly-1", "u-job")},
			"its subject Job.batch ml/nightly-1 is rolled up into CronJob.batch/nightly"},
		{"owned list misses a child", []client.Object{aibom(deployGK, "apps/v1", "web", "u-web"), aibom(cronGK, "batch/v1", "nightly", "u-cron")},
			"absorbs [], want [Job.batch/nightly-1]"},
		{"AIBOM of a deleted workload", []client.Object{aibom(deployGK, "apps/v1", "web", "u-web"), aibom(cronGK, "batch/v1", "nightly", "u-cron", "Job.batch/nightly-1"), aibom(deployGK, "apps/v1", "gone", "u-gone")},
			"its subject Deployment.apps ml/gone does not exist"},
		{"AIBOM of a predecessor", []client.Object{aibom(deployGK, "apps/v1", "web", "u-old"), aibom(cronGK, "batch/v1", "nightly", "u-cron", "Job.batch/nightly-1")},
			"names subject UID u-old, but Deployment.apps ml/web has UID u-web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := check(t, append([]client.Object{deploy.DeepCopy(), rs.DeepCopy(), cron.DeepCopy(), job.DeepCopy()}, tc.objs...)...)
			require.Error(t, rep.Err())
			require.True(t, strings.Contains(rep.Err().Error(), tc.want), "want %q in:\n%v", tc.want, rep.Err())
		})
	}
}

// A Job whose owner was re-created (its reference names the old UID) is a
// root, and the re-created CronJob absorbs nothing.
func TestConservationFollowsUIDs(t *testing.T) {
	deploy, rs, cron, job := forest()
	cron.UID = "u-cron-2"
	rep := check(t, deploy, rs, cron, job,
		aibom(deployGK, "apps/v1", "web", "u-web"),
		aibom(cronGK, "batch/v1", "nightly", "u-cron-2", "Job.batch/nightly-1"))
	require.Error(t, rep.Err())
	require.Contains(t, rep.Err().Error(), "absorbs [Job.batch/nightly-1], want []")
	require.Contains(t, rep.Err().Error(), "Job.batch ml/nightly-1 (uid u-job) is a root without an AIBOM")
}
