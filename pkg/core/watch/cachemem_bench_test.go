package watch

// Memory per cached object, with and without the cache transforms
// (transform.go):
//
//	go test -run '^$' -bench CacheMemory -benchtime 3x ./pkg/core/watch/
//
// Each sub-benchmark fills one informer cache, configured as Supervisor.start
// configures it, with realistic objects as the API server returns them (a
// vLLM pod with its spec, env, args, volumes, managed fields, the
// last-applied-configuration annotation and a full status; a Deployment with
// the same template and a status; a ReplicaSet as metadata), and reports
// the live heap the cache holds per object: HeapAlloc after a GC with the
// synced cache, minus HeapAlloc after a GC before it, divided by N.
//
// The in-memory ListerWatcher decodes its list from JSON on every List, as a
// reflector decodes a response: every cached object owns its strings, as in
// production (a deep copy would share them and hide most of the cost).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// cacheMemPods etc. are the objects per cache.
const (
	cacheMemPods        = 2000
	cacheMemDeployments = 500
	cacheMemReplicaSets = 500
)

const cacheMemPodTemplate = `
metadata:
  labels: {app.kubernetes.io/name: llama, app.kubernetes.io/component: server, pod-template-hash: 7d9f8c6b5}
  annotations: {prometheus.io/scrape: "true", prometheus.io/port: "8000"}
spec:
  serviceAccountName: llama
  terminationGracePeriodSeconds: 60
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.3
    command: [python3, -m, vllm.entrypoints.openai.api_server]
    args: [--model, meta-llama/Llama-3.1-8B-Instruct, --port, "8000", --tensor-parallel-size, "2", --max-model-len, "8192", --gpu-memory-utilization, "0.9", --served-model-name, llama]
    env:
    - {name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}
    - {name: HF_HOME, value: /root/.cache/huggingface}
    - {name: VLLM_LOGGING_LEVEL, value: INFO}
    - {name: NCCL_DEBUG, value: WARN}
    - {name: POD_NAME, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}
    - {name: POD_IP, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: status.podIP}}}
    ports: [{name: http, containerPort: 8000, protocol: TCP}]
    resources:
      limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "2"}
      requests: {cpu: "4", memory: 48Gi, nvidia.com/gpu: "2"}
    readinessProbe: {httpGet: {path: /health, port: 8000, scheme: HTTP}, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3}
    livenessProbe: {httpGet: {path: /health, port: 8000, scheme: HTTP}, initialDelaySeconds: 120, periodSeconds: 30, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3}
    volumeMounts:
    - {name: cache, mountPath: /root/.cache/huggingface}
    - {name: shm, mountPath: /dev/shm}
    - {name: kube-api-access-abcde, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
    imagePullPolicy: IfNotPresent
  volumes:
  - {name: cache, persistentVolumeClaim: {claimName: llama-cache}}
  - {name: shm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}
  - name: kube-api-access-abcde
    projected:
      defaultMode: 420
      sources:
      - serviceAccountToken: {expirationSeconds: 3607, path: token}
      - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: ca.crt}]}
      - downwardAPI: {items: [{path: namespace, fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}}]}
  restartPolicy: Always
  dnsPolicy: ClusterFirst
  schedulerName: default-scheduler
  securityContext: {}
  enableServiceLinks: true
  preemptionPolicy: PreemptLowerPriority
  priority: 0
`

const cacheMemManagedFields = `
- manager: kube-controller-manager
  operation: Update
  apiVersion: v1
  time: "2026-11-29T10:00:00Z"
  fieldsType: FieldsV1
  fieldsV1:
    f:metadata: {f:generateName: {}, f:labels: {.: {}, f:app.kubernetes.io/name: {}, f:pod-template-hash: {}}, f:ownerReferences: {.: {}, 'k:{"uid":"x"}': {}}}
    f:spec: {f:containers: {'k:{"name":"vllm"}': {.: {}, f:args: {}, f:command: {}, f:env: {.: {}, 'k:{"name":"HF_TOKEN"}': {.: {}, f:name: {}, f:valueFrom: {}}}, f:image: {}, f:imagePullPolicy: {}, f:name: {}, f:ports: {}, f:resources: {}, f:volumeMounts: {}}}, f:volumes: {}}
- manager: kubelet
  operation: Update
  apiVersion: v1
  time: "2026-11-29T10:02:00Z"
  fieldsType: FieldsV1
  subresource: status
  fieldsV1:
    f:status: {f:conditions: {'k:{"type":"Ready"}': {.: {}, f:lastProbeTime: {}, f:lastTransitionTime: {}, f:status: {}, f:type: {}}}, f:containerStatuses: {}, f:hostIP: {}, f:phase: {}, f:podIP: {}, f:podIPs: {}, f:startTime: {}}
`

const cacheMemPodStatus = `
phase: Running
hostIP: 10.0.12.7
podIP: 10.244.3.17
podIPs: [{ip: 10.244.3.17}]
qosClass: Burstable
startTime: "2026-11-29T10:00:05Z"
conditions:
- {type: PodReadyToStartContainers, status: "True", lastProbeTime: null, lastTransitionTime: "2026-11-29T10:00:07Z"}
- {type: Initialized, status: "True", lastProbeTime: null, lastTransitionTime: "2026-11-29T10:00:05Z"}
- {type: Ready, status: "True", lastProbeTime: null, lastTransitionTime: "2026-11-29T10:02:00Z"}
- {type: ContainersReady, status: "True", lastProbeTime: null, lastTransitionTime: "2026-11-29T10:02:00Z"}
- {type: PodScheduled, status: "True", lastProbeTime: null, lastTransitionTime: "2026-11-29T10:00:05Z"}
containerStatuses:
- name: vllm
  image: docker.io/vllm/vllm-openai:v0.6.3
  imageID: docker.io/vllm/vllm-openai@sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4
  containerID: containerd://4f1c2b9e3d4a4e5f8a7b1c2d3e4f5a6b4f1c2b9e3d4a4e5f8a7b1c2d3e4f5a6b
  ready: true
  started: true
  restartCount: 0
  state: {running: {startedAt: "2026-11-29T10:00:30Z"}}
  lastState: {}
  volumeMounts:
  - {name: cache, mountPath: /root/.cache/huggingface}
  - {name: shm, mountPath: /dev/shm}
  - {name: kube-api-access-abcde, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true, recursiveReadOnly: Disabled}
`

func yamlValue(b *testing.B, doc string) any {
	b.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		b.Fatal(err)
	}
	return v
}

// cacheMemObject is object i of a kind as the API server serves it.
func cacheMemObject(b *testing.B, kind string, i int) map[string]any {
	b.Helper()
	tmpl := yamlValue(b, cacheMemPodTemplate).(map[string]any)
	md := map[string]any{
		"name": fmt.Sprintf("llama-%06d", i), "namespace": benchNamespace,
		"uid":             fmt.Sprintf("6f1c2b9e-3d4a-4e5f-8a7b-%012d", i),
		"resourceVersion": fmt.Sprint(100000 + i), "generation": int64(1),
		"creationTimestamp": "2026-11-29T10:00:00Z",
		"labels":            map[string]any{"app.kubernetes.io/name": "llama", "app.kubernetes.io/component": "server", "app.kubernetes.io/part-of": "inference"},
		"managedFields":     yamlValue(b, cacheMemManagedFields),
	}
	obj := map[string]any{"metadata": md}
	owner := func(apiVersion, kind, name string) {
		md["ownerReferences"] = []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name,
			"uid": fmt.Sprintf("5c1f0e2a-0000-4000-8000-%012d", i/4), "controller": true, "blockOwnerDeletion": true}}
	}
	switch kind {
	case "Pod":
		obj["apiVersion"], obj["kind"] = "v1", "Pod"
		md["generateName"] = "llama-7d9f8c6b5-"
		md["labels"] = tmpl["metadata"].(map[string]any)["labels"]
		md["annotations"] = tmpl["metadata"].(map[string]any)["annotations"]
		owner("apps/v1", "ReplicaSet", fmt.Sprintf("llama-%06d-7d9f8c6b5", i/4))
		spec := tmpl["spec"].(map[string]any)
		spec["nodeName"] = fmt.Sprintf("gpu-node-%03d", i%200)
		obj["spec"] = spec
		obj["status"] = yamlValue(b, cacheMemPodStatus)
	case "Deployment":
		obj["apiVersion"], obj["kind"] = "apps/v1", "Deployment"
		obj["spec"] = map[string]any{
			"replicas": int64(4), "revisionHistoryLimit": int64(10), "progressDeadlineSeconds": int64(600),
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "llama"}},
			"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
			"template": tmpl,
		}
		obj["status"] = yamlValue(b, `{observedGeneration: 1, replicas: 4, updatedReplicas: 4, readyReplicas: 4, availableReplicas: 4,
  conditions: [{type: Available, status: "True", lastUpdateTime: "2026-11-29T10:02:00Z", lastTransitionTime: "2026-11-29T10:02:00Z", reason: MinimumReplicasAvailable, message: Deployment has minimum availability.},
    {type: Progressing, status: "True", lastUpdateTime: "2026-11-29T10:02:00Z", lastTransitionTime: "2026-11-29T10:00:00Z", reason: NewReplicaSetAvailable, message: ReplicaSet "llama-7d9f8c6b5" has successfully progressed.}]}`)
	case "ReplicaSet":
		obj["apiVersion"], obj["kind"] = "apps/v1", "ReplicaSet"
		md["annotations"] = map[string]any{"deployment.kubernetes.io/desired-replicas": "4", "deployment.kubernetes.io/max-replicas": "5", "deployment.kubernetes.io/revision": "1"}
		owner("apps/v1", "Deployment", fmt.Sprintf("llama-%06d", i))
	}
	if kind != "ReplicaSet" {
		// kubectl apply's copy of the object, as applied (no status).
		applied := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"],
			"metadata": map[string]any{"name": md["name"], "namespace": md["namespace"], "labels": md["labels"]}, "spec": obj["spec"]}
		data, err := json.Marshal(applied)
		if err != nil {
			b.Fatal(err)
		}
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
		}
		ann = k8sruntime.DeepCopyJSONValue(ann).(map[string]any)
		ann[graph.LastAppliedAnnotation] = string(data) + "\n"
		md["annotations"] = ann
	}
	return obj
}

// jsonListerWatcher decodes its list from JSON on every List.
type jsonListerWatcher struct {
	data     []byte
	metadata bool
}

func (j *jsonListerWatcher) List(metav1.ListOptions) (k8sruntime.Object, error) {
	if j.metadata {
		l := &metav1.PartialObjectMetadataList{}
		return l, json.Unmarshal(j.data, l)
	}
	l := &unstructured.UnstructuredList{}
	return l, l.UnmarshalJSON(j.data)
}

func (j *jsonListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

func (j *jsonListerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkCacheMemory reports the heap each cached object costs, by kind and
// transform: none, managedfields (cache.TransformStripManagedFields, the
// transform before transform.go), aibom (TransformFor alone: the maps), and
// supervisor (what Supervisor.start configures: TransformFor, then the
// compact form for tracked kinds). The cache is read back through the
// Supervisor's Store (cacheStore), with its index.
func BenchmarkCacheMemory(b *testing.B) {
	reg := coretest.TestRegistry(b)
	for _, k := range []struct {
		gvkKind string
		n       int
	}{{"Pod", cacheMemPods}, {"Deployment", cacheMemDeployments}, {"ReplicaSet", cacheMemReplicaSets}} {
		var e graph.Entry
		for _, en := range reg.Entries() {
			if en.Kind.Kind == k.gvkKind {
				e = en
			}
		}
		// The list as the API server would send it.
		items := make([]any, k.n)
		for i := range items {
			items[i] = cacheMemObject(b, k.gvkKind, i)
		}
		listKind := "List"
		data, err := json.Marshal(map[string]any{"apiVersion": e.GVK().GroupVersion().String(), "kind": k.gvkKind + listKind,
			"metadata": map[string]any{"resourceVersion": "200000"}, "items": items})
		if err != nil {
			b.Fatal(err)
		}
		items = nil
		for _, tr := range []struct {
			name string
			fn   toolscache.TransformFunc
		}{{"none", nil}, {"managedfields", cache.TransformStripManagedFields()}, {"aibom", TransformFor(e)}, {"supervisor", (&Supervisor{Registry: reg}).transform(e)}} {
			b.Run(fmt.Sprintf("kind=%s/transform=%s", k.gvkKind, tr.name), func(b *testing.B) {
				var perObj float64
				for b.Loop() {
					perObj += float64(cacheMemFill(b, e, data, k.n, tr.fn)) / float64(k.n)
				}
				b.ReportMetric(perObj/float64(b.N), "heap-B/obj")
				b.ReportMetric(float64(len(data))/float64(k.n), "json-B/obj")
			})
		}
	}
}

// cacheMemFill starts one kind's cache over the list in data, waits for it to
// sync, and returns the live heap it holds.
func cacheMemFill(b *testing.B, e graph.Entry, data []byte, n int, transform toolscache.TransformFunc) int64 {
	b.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(e.GVK(), meta.RESTScopeNamespace)
	listGVK := e.GVK()
	listGVK.Kind += "List"
	mapper.Add(listGVK, meta.RESTScopeNamespace)
	lw := &jsonListerWatcher{data: data, metadata: !graph.NeedsFullObject(e)}
	var inf toolscache.SharedIndexInformer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := heapAfterGC()
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{
		HTTPClient:                  http.DefaultClient,
		Scheme:                      coretest.TestScheme(),
		Mapper:                      mapper,
		DefaultTransform:            transform,
		ReaderFailOnMissingInformer: true,
		NewInformer: func(_ toolscache.ListerWatcher, obj k8sruntime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
			inf = toolscache.NewSharedIndexInformer(lw, obj, resync, idx)
			return inf
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, graph.NewObject(e), cache.BlockUntilSynced(false)); err != nil {
		b.Fatal(err)
	}
	if err := inf.AddIndexers(toolscache.Indexers{controllerIndex: controllerIndexFunc}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}
	objs, err := cacheStore{gvk: e.GVK(), indexer: inf.GetIndexer()}.InNamespace(ctx, e, benchNamespace)
	if err != nil || len(objs) != n {
		b.Fatalf("cache holds %d objects, want %d (%v)", len(objs), n, err)
	}
	if u, ok := objs[0].(*unstructured.Unstructured); ok && e.GroupKind() == graph.PodGroupKind {
		if statuses, _, _ := unstructured.NestedSlice(u.Object, "status", "containerStatuses"); len(statuses) != 1 {
			b.Fatal("the running image of a cached pod is lost")
		}
	}
	objs = nil
	after := heapAfterGC()
	runtime.KeepAlive(c)
	return int64(after) - int64(before)
}

// BenchmarkCachedRead is what one Store read of a cached Deployment (the
// object of BenchmarkCacheMemory, transformed) costs in each form: the deep
// copy of its maps (form=unstructured, before the compact form) and the
// decoding of its JSON (form=compact, what the Supervisor does).
//
//	go test -run '^$' -bench CachedRead -benchmem ./pkg/core/watch/
func BenchmarkCachedRead(b *testing.B) {
	reg := coretest.TestRegistry(b)
	e, ok := reg.Lookup(coretest.DeployGVK.GroupKind())
	if !ok {
		b.Fatal("no Deployment in the registry")
	}
	u := &unstructured.Unstructured{Object: cacheMemObject(b, "Deployment", 0)}
	out, err := TransformFor(e)(u)
	if err != nil {
		b.Fatal(err)
	}
	tracked := out.(*unstructured.Unstructured)
	for _, form := range []string{"unstructured", "compact"} {
		var cached any = tracked
		if form == "compact" {
			if cached, err = (&Supervisor{Registry: reg}).transform(e)(tracked.DeepCopy()); err != nil {
				b.Fatal(err)
			}
		}
		indexer := toolscache.NewIndexer(toolscache.DeletionHandlingMetaNamespaceKeyFunc, toolscache.Indexers{})
		if err := indexer.Add(cached); err != nil {
			b.Fatal(err)
		}
		store := cacheStore{gvk: e.GVK(), indexer: indexer}
		b.Run("form="+form, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := store.Get(context.Background(), e, benchNamespace, tracked.GetName()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
