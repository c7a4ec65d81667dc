package envtest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

const otherDigest = "1111111111111111111111111111111111111111111111111111111111111111"

const cronJob = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
`

const cronJobChildren = `
apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-29180280
  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly, controller: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
---
apiVersion: v1
kind: Pod
metadata:
  name: nightly-29180280-abcde
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: nightly-29180280, controller: true}]
spec: {restartPolicy: Never, containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3"}]}
status:
  containerStatuses:
    - {name: eval, image: "docker.io/vllm/vllm-openai:v0.6.3", imageID: "docker.io/vllm/vllm-openai@sha256:` + runningDigest + `", ready: true, restartCount: 0, state: {running: {}}}
`

// Seed §3: Jobs spawned by a CronJob roll up into it; their pods' digests
// reach the CronJob's document.
func TestCronJobAbsorbsItsJobAndGetsThePodsDigest(t *testing.T) {
	ns := newNamespace(t, true)
	env.MustApply(t, ns, cronJob+"---"+cronJobChildren)
	a := waitAIBOM(t, harness.AIBOMKey(ns, cronJobGK, "nightly"), func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, runningDigest) && len(a.Status.Absorbed) == 1
	})
	require.Equal(t, []string{"Job.batch/nightly-29180280"}, a.Status.Absorbed)
	require.Contains(t, a.Status.Document, `"aibom.rollup.owned.0"`)
	require.Contains(t, a.Status.Document, `"Job.batch/nightly-29180280"`)
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
	requireNoAIBOMFor(t, harness.AIBOMKey(ns, jobGK, "nightly-29180280"))
}

// Seed §1: a workload that becomes owned loses its own AIBOM; the owner's
// document lists it.
func TestWorkloadThatBecomesOwnedLosesItsAIBOM(t *testing.T) {
	ns := newNamespace(t, true)
	objs := env.MustApply(t, ns, cronJob+`
---
apiVersion: batch/v1
kind: Job
metadata: {name: adopted}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: eval, image: "vllm/vllm-openai:v0.6.3"}]
`)
	jobKey := harness.AIBOMKey(ns, jobGK, "adopted")
	waitAIBOM(t, jobKey, nil)

	job := &unstructured.Unstructured{}
	job.SetGroupVersionKind(objs[1].GroupVersionKind())
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(objs[1]), job))
	setControllerRef(job, objs[0])
	require.NoError(t, env.Client.Update(context.Background(), job))

	waitNoAIBOM(t, jobKey)
	waitAIBOM(t, harness.AIBOMKey(ns, cronJobGK, "nightly"), func(a *v1alpha1.AIBOM) bool {
		return len(a.Status.Absorbed) == 1 && a.Status.Absorbed[0] == "Job.batch/adopted"
	})
}

// Degradation table: owner deleted, children linger -> the children are
// reported as roots (envtest has no garbage collector, as in an orphaning
// delete).
func TestDeletingAnOwnerMakesTheLingeringChildARoot(t *testing.T) {
	ns := newNamespace(t, true)
	objs := env.MustApply(t, ns, cronJob+"---"+cronJobChildren)
	waitAIBOM(t, harness.AIBOMKey(ns, cronJobGK, "nightly"), func(a *v1alpha1.AIBOM) bool { return len(a.Status.Absorbed) == 1 })
	require.NoError(t, env.Client.Delete(context.Background(), objs[0]))
	a := waitAIBOM(t, harness.AIBOMKey(ns, jobGK, "nightly-29180280"), func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, runningDigest)
	})
	require.Empty(t, a.Status.Absorbed)
	waitNoAIBOM(t, harness.AIBOMKey(ns, cronJobGK, "nightly"))
}

// UID identity: an owner re-created under the same name never adopts its
// predecessor's children.
func TestRecreatedOwnerDoesNotAdoptTheStaleChild(t *testing.T) {
	ns := newNamespace(t, true)
	objs := env.MustApply(t, ns, cronJob+"---"+cronJobChildren)
	cronKey := harness.AIBOMKey(ns, cronJobGK, "nightly")
	waitAIBOM(t, cronKey, func(a *v1alpha1.AIBOM) bool { return len(a.Status.Absorbed) == 1 })
	require.NoError(t, env.Client.Delete(context.Background(), objs[0]))
	waitAIBOM(t, harness.AIBOMKey(ns, jobGK, "nightly-29180280"), nil)

	env.MustApply(t, ns, cronJob)
	fresh := &unstructured.Unstructured{}
	fresh.SetGroupVersionKind(objs[0].GroupVersionKind())
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(objs[0]), fresh))
	require.NotEqual(t, objs[0].GetUID(), fresh.GetUID())
	a := waitAIBOM(t, cronKey, func(a *v1alpha1.AIBOM) bool { return a.Spec.Subject.UID == string(fresh.GetUID()) })
	require.Empty(t, a.Status.Absorbed, "the stale Job names the old UID and must not be adopted")
	require.NotContains(t, a.Status.Document, runningDigest, "nor may its pod's digest be attributed")
	waitAIBOM(t, harness.AIBOMKey(ns, jobGK, "nightly-29180280"), nil)
}

// Generic roots: an owner of a kind no adapter declares, which the cluster
// does not even serve, is the root as the child's controller reference names
// it. The StatefulSet is absorbed and listed, and the owner's document gets
// the child's AI signal (the whole roll-up's signal): nothing disappears.
func TestStatefulSetWithAnUnknownOwnerRollsUpIntoAGenericRoot(t *testing.T) {
	ns := newNamespace(t, true)
	env.MustApply(t, ns, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  ownerReferences: [{apiVersion: operators.example.com/v1, kind: Database, name: db, uid: 0b7c9d6e-1f2a-4b3c-8d9e-0f1a2b3c4d5e, controller: true}]
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: main, image: "ollama/ollama:0.3.14"}]}
`)
	databaseGK := schema.GroupKind{Group: "operators.example.com", Kind: "Database"}
	a := waitAIBOM(t, harness.AIBOMKey(ns, databaseGK, "db"), nil)
	require.Equal(t, "ollama", a.Status.Summary.Runtime)
	require.Equal(t, []string{"StatefulSet.apps/db"}, a.Status.Absorbed)
	require.Equal(t, "0b7c9d6e-1f2a-4b3c-8d9e-0f1a2b3c4d5e", a.Spec.Subject.UID)
	require.Contains(t, a.Status.Document, `"aibom.root.generic","value":"true"`)
	require.Contains(t, a.Status.Document, `"aibom.root.read","value":"false"`)
	require.Contains(t, a.Status.Document, "StatefulSet/db:spec.template.spec.containers[0]")
	waitNoAIBOM(t, harness.AIBOMKey(ns, statefulSetGK, "db"))
}

// Byte identity: a root with no descendants yields exactly the document it
// would without the roll-up: the same bytes as building it from the scrape
// and the pod alone.
func TestRootWithoutTrackedDescendantsIsByteIdentical(t *testing.T) {
	ns := newNamespace(t, true)
	objs := env.MustApply(t, ns, vllmChain)
	a := waitAIBOM(t, harness.AIBOMKey(ns, deploymentGK, "llama"), func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, runningDigest)
	})
	deploy, pod := objs[0], objs[2]
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(deploy), deploy))
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), pod))
	findings, err := apps.New().Scrape(context.Background(), deploy)
	require.NoError(t, err)
	want, err := document.Build(document.Input{
		Subject:  document.Subject{APIVersion: "apps/v1", Group: "apps", Kind: "Deployment", Namespace: ns, Name: "llama", UID: string(deploy.GetUID())},
		Tool:     harness.ControllerTool,
		Findings: findings,
		Created:  deploy.GetCreationTimestamp().Time,
		Digests: digest.Resolve(findings.Containers, []digest.Pod{{Name: pod.GetName(), Statuses: []digest.PodContainerStatus{{
			Name: "vllm", Image: "docker.io/vllm/vllm-openai:v0.6.3", ImageID: "docker.io/vllm/vllm-openai@sha256:" + runningDigest,
		}}}}),
	})
	require.NoError(t, err)
	require.Equal(t, string(want.JSON), a.Status.Document)
	require.NotContains(t, a.Status.Document, "aibom.rollup.owned")
}

// Cost: hops and closures through cached kinds issue no live request; a
// digest change on a pod two hops below a root costs exactly one write.
func TestHopsThroughCachedKindsIssueNoLiveRequest(t *testing.T) {
	ns := newNamespace(t, true)
	objs := env.MustApply(t, ns, cronJob+"---"+cronJobChildren)
	key := harness.AIBOMKey(ns, cronJobGK, "nightly")
	waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, runningDigest) })
	waitQuiet(t)

	before := controller.Requests.Snapshot()
	pod := objs[2]
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), pod))
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	statuses[0].(map[string]any)["imageID"] = "docker.io/vllm/vllm-openai@sha256:" + otherDigest
	require.NoError(t, unstructured.SetNestedSlice(pod.Object, statuses, "status", "containerStatuses"))
	require.NoError(t, env.Client.Status().Update(context.Background(), pod))

	waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return strings.Contains(a.Status.Document, otherDigest) })
	waitQuiet(t)
	require.Equal(t, map[string]int{"PATCH aiboms/status": 1}, controller.Requests.Since(before),
		"the walk from the pod and the CronJob's closure must read only the cache")
}

func setControllerRef(obj, owner *unstructured.Unstructured) {
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), harness.ControllerRef(owner)))
}
