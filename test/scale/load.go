package scale

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

// Chain shapes of the mixed load. Each is what the operator (or Kubernetes)
// would have materialised; there are no controllers in the local control
// plane, so the load writes every level itself.
const (
	// ShapeVLLM: Deployment -> ReplicaSet -> Pods (every fourth one also has
	// an old, scaled-down ReplicaSet).
	ShapeVLLM = "vllm-deployment"
	// ShapeCronJob: CronJob -> 2 Jobs -> a Pod each.
	ShapeCronJob = "cronjob"
	// ShapeNIM: NIMService -> Deployment -> ReplicaSet -> Pods.
	ShapeNIM = "nimservice"
	// ShapeLWS: LeaderWorkerSet -> leader StatefulSet -> 2 leader Pods, each
	// -> worker StatefulSet -> worker Pod.
	ShapeLWS = "leaderworkerset"
	// ShapeDynamoDCD: DynamoGraphDeployment -> 2 DynamoComponentDeployments
	// -> Deployment -> ReplicaSet -> Pods.
	ShapeDynamoDCD = "dynamo-dcd"
	// ShapeGroveClique: DynamoGraphDeployment -> PodCliqueSet -> 2 PodCliques
	// -> Pods.
	ShapeGroveClique = "dynamo-grove-clique"
	// ShapeGroveScalingGroup: DynamoGraphDeployment -> PodCliqueSet ->
	// PodClique (frontend) -> Pod, and PodCliqueSet -> PodCliqueScalingGroup
	// -> leader and worker PodCliques -> Pods.
	ShapeGroveScalingGroup = "dynamo-grove-scalinggroup"

	// The generic load's shapes: owners no adapter or profile declares.

	// ShapeGenericPods: ServingGroup (serving.example.com, test/crds/unknown)
	// -> 2 Pods its operator created directly.
	ShapeGenericPods = "generic-pods"
	// ShapeGenericDeployment: ServingGroup -> Deployment -> ReplicaSet -> Pod.
	ShapeGenericDeployment = "generic-deployment"
	// ShapeBarePod: a vLLM Pod nobody controls (kubectl run, a notebook).
	ShapeBarePod = "bare-pod"
)

// genericMix is one cycle of the generic load's shapes.
var genericMix = []string{ShapeGenericPods, ShapeGenericDeployment, ShapeBarePod}

// mix is one cycle of chain shapes: 20 chains, weighted towards plain
// Deployments, as a cluster with a few operators would look.
var mix = []string{
	ShapeVLLM, ShapeDynamoDCD, ShapeGroveClique, ShapeVLLM, ShapeNIM,
	ShapeLWS, ShapeCronJob, ShapeVLLM, ShapeGroveScalingGroup, ShapeDynamoDCD,
	ShapeVLLM, ShapeGroveClique, ShapeNIM, ShapeVLLM, ShapeLWS,
	ShapeCronJob, ShapeGroveScalingGroup, ShapeDynamoDCD, ShapeVLLM, ShapeGroveClique,
}

// Images of the load. Each image reference runs one digest (digestOf).
const (
	imageVLLM     = "vllm/vllm-openai:v0.8.5"
	imageVLLMOld  = "vllm/vllm-openai:v0.6.3"
	imageTGI      = "ghcr.io/huggingface/text-generation-inference:2.4.0"
	imageNIMRepo  = "nvcr.io/nim/meta/llama-3.2-1b-instruct"
	imageNIMTag   = "1.12.0"
	imageDynamo   = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"
	imageDynamoSG = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.1"
)

// Node is one object to create. Parent is the index in its chain of the
// object's controller owner (-1: none); the owner is created first and its
// UID goes into the reference.
type Node struct {
	Object *unstructured.Unstructured
	Parent int
	// Status, when set, is written through the status subresource after the
	// create (pods: status.containerStatuses with the running digests, the
	// way a kubelet would).
	Status map[string]any
}

// Root is what the controller must write for a chain: one AIBOM for the
// chain's root, absorbing exactly Absorbed, every container digest resolved
// to one of Digests.
type Root struct {
	GroupKind schema.GroupKind
	Namespace string
	Name      string
	// Absorbed lists the tracked descendants as "<Kind>.<group>/<name>"
	// (graph.OwnedIdentity), sorted.
	Absorbed []string
	// Digests are the hex SHA-256 digests the root's containers run, sorted.
	Digests []string
}

// AIBOMName is the name of the root's AIBOM.
func (r Root) AIBOMName() string { return reconcile.AIBOMName(r.GroupKind, r.Name) }

// Chain is a root and everything it controls, parent first.
type Chain struct {
	Shape     string
	Namespace string
	Nodes     []Node
	Root      Root
}

// Load is a planned load: the opted-in namespaces and the chains.
type Load struct {
	Namespaces []string
	Chains     []Chain
}

// In returns the part of the load in the given namespaces.
func (l Load) In(namespaces map[string]bool) Load {
	var out Load
	for _, ns := range l.Namespaces {
		if namespaces[ns] {
			out.Namespaces = append(out.Namespaces, ns)
		}
	}
	for _, c := range l.Chains {
		if namespaces[c.Namespace] {
			out.Chains = append(out.Chains, c)
		}
	}
	return out
}

// Objects counts the objects of the load (namespaces excluded).
func (l Load) Objects() int {
	n := 0
	for _, c := range l.Chains {
		n += len(c.Nodes)
	}
	return n
}

// Statuses counts the status writes of the load.
func (l Load) Statuses() int {
	n := 0
	for _, c := range l.Chains {
		for _, node := range c.Nodes {
			if node.Status != nil {
				n++
			}
		}
	}
	return n
}

// ObjectsByKind counts the objects by kind.
func (l Load) ObjectsByKind() map[string]int {
	out := map[string]int{}
	for _, c := range l.Chains {
		for _, node := range c.Nodes {
			out[node.Object.GetKind()]++
		}
	}
	return out
}

// RootsByShape counts the chains by shape.
func (l Load) RootsByShape() map[string]int {
	out := map[string]int{}
	for _, c := range l.Chains {
		out[c.Shape]++
	}
	return out
}

// namespaceName is the i-th namespace of the load.
func namespaceName(i int) string { return fmt.Sprintf("scale-%03d", i) }

// PlanMixed plans about objects objects (the last chain is finished, so a
// few more) over namespaces opted-in namespaces, cycling through the chain
// shapes of mix and spreading the chains round-robin over the namespaces.
func PlanMixed(namespaces, objects int) Load {
	l := Load{}
	for i := range max(namespaces, 1) {
		l.Namespaces = append(l.Namespaces, namespaceName(i))
	}
	total := 0
	for i := 0; total < objects; i++ {
		ns := l.Namespaces[i%len(l.Namespaces)]
		c := buildChain(mix[i%len(mix)], ns, i)
		total += len(c.Nodes)
		l.Chains = append(l.Chains, c)
	}
	return l
}

// PlanDeployments plans the peer's load: n plain vLLM Deployments, each with
// its ReplicaSet and one running Pod, spread round-robin over namespaces.
func PlanDeployments(namespaces, n int) Load {
	l := Load{}
	for i := range max(namespaces, 1) {
		l.Namespaces = append(l.Namespaces, namespaceName(i))
	}
	for i := range n {
		b := newBuilder(ShapeVLLM, l.Namespaces[i%len(l.Namespaces)])
		b.vllmDeployment(fmt.Sprintf("vllm-%05d", i), imageVLLM, 1, false)
		l.Chains = append(l.Chains, b.chain())
	}
	return l
}

// PlanGeneric plans n roots that no adapter declares, cycling through the
// shapes of genericMix and spreading them round-robin over namespaces: what
// the controller costs when it meets operators nobody named.
func PlanGeneric(namespaces, n int) Load {
	l := Load{}
	for i := range max(namespaces, 1) {
		l.Namespaces = append(l.Namespaces, namespaceName(i))
	}
	for i := range n {
		shape := genericMix[i%len(genericMix)]
		b := newBuilder(shape, l.Namespaces[i%len(l.Namespaces)])
		name := fmt.Sprintf("%s-%05d", shortName[shape], i)
		switch shape {
		case ShapeGenericPods:
			b.servingGroupPods(name, 2)
		case ShapeGenericDeployment:
			b.servingGroupDeployment(name)
		case ShapeBarePod:
			b.pod(name, -1, map[string]any{"app": name}, ctr{"vllm", imageVLLM})
			b.runs(imageVLLM)
		}
		l.Chains = append(l.Chains, b.chain())
	}
	return l
}

func buildChain(shape, ns string, i int) Chain {
	b := newBuilder(shape, ns)
	name := fmt.Sprintf("%s-%05d", shortName[shape], i)
	switch shape {
	case ShapeVLLM:
		image := imageVLLM
		if i%3 == 0 {
			image = imageVLLMOld
		}
		b.vllmDeployment(name, image, 1+i%2, i%4 == 0)
	case ShapeCronJob:
		b.cronJob(name, 2)
	case ShapeNIM:
		b.nimService(name, 1+i%2)
	case ShapeLWS:
		b.leaderWorkerSet(name, 2, 2)
	case ShapeDynamoDCD:
		b.dynamoDCD(name, 1+i%2)
	case ShapeGroveClique:
		b.groveClique(name)
	case ShapeGroveScalingGroup:
		b.groveScalingGroup(name)
	default:
		panic("unknown shape " + shape)
	}
	return b.chain()
}

var shortName = map[string]string{
	ShapeVLLM: "llm", ShapeCronJob: "eval", ShapeNIM: "nim", ShapeLWS: "lws",
	ShapeDynamoDCD: "dgd", ShapeGroveClique: "grove", ShapeGroveScalingGroup: "grovemn",
	ShapeGenericPods: "sg", ShapeGenericDeployment: "sgd", ShapeBarePod: "adhoc",
}

// builder accumulates one chain.
type builder struct {
	c       Chain
	digests map[string]bool
}

func newBuilder(shape, ns string) *builder {
	return &builder{c: Chain{Shape: shape, Namespace: ns}, digests: map[string]bool{}}
}

func (b *builder) chain() Chain {
	for d := range b.digests {
		b.c.Root.Digests = append(b.c.Root.Digests, d)
	}
	sort.Strings(b.c.Root.Digests)
	sort.Strings(b.c.Root.Absorbed)
	return b.c
}

// add appends an object controlled by the node at parent (-1: the root) and
// returns its index. The root must be added first.
func (b *builder) add(obj *unstructured.Unstructured, parent int) int {
	obj.SetNamespace(b.c.Namespace)
	if parent < 0 {
		gvk := obj.GroupVersionKind()
		b.c.Root.GroupKind, b.c.Root.Namespace, b.c.Root.Name = gvk.GroupKind(), b.c.Namespace, obj.GetName()
	}
	b.c.Nodes = append(b.c.Nodes, Node{Object: obj, Parent: parent})
	return len(b.c.Nodes) - 1
}

// absorb records a tracked descendant.
func (b *builder) absorb(obj *unstructured.Unstructured) {
	b.c.Root.Absorbed = append(b.c.Root.Absorbed, graph.OwnedIdentity(obj.GroupVersionKind().GroupKind(), obj.GetName()))
}

// runs records an image the root's spec declares.
func (b *builder) runs(image string) { b.digests[digestOf(image)] = true }

// pod adds a running pod with one container per (name, image) pair.
func (b *builder) pod(name string, parent int, labels map[string]any, containers ...ctr) {
	var specs, statuses []any
	for _, c := range containers {
		specs = append(specs, map[string]any{"name": c.name, "image": c.image})
		repo, _, _ := document.ParseImage(c.image)
		statuses = append(statuses, map[string]any{
			"name": c.name, "image": c.image, "imageID": repo + "@sha256:" + digestOf(c.image),
			"ready": true, "started": true, "restartCount": int64(0),
			"state": map[string]any{"running": map[string]any{"startedAt": "2026-11-01T09:00:00Z"}},
		})
	}
	p := object("v1", "Pod", name)
	p.SetLabels(stringMap(labels))
	p.Object["spec"] = map[string]any{"containers": specs}
	i := b.add(p, parent)
	b.c.Nodes[i].Status = map[string]any{"phase": "Running", "containerStatuses": statuses}
}

type ctr struct{ name, image string }

// digestOf is the hex digest the load's pods report for an image reference.
func digestOf(image string) string {
	sum := sha256.Sum256([]byte("scale:" + image))
	return hex.EncodeToString(sum[:])
}

// suffix is a deterministic pod-name suffix.
func suffix(s string) string {
	sum := sha256.Sum256([]byte(s))
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	out := make([]byte, 5)
	for i := range out {
		out[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(out)
}

func object(apiVersion, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	return u
}

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v.(string)
	}
	return out
}

func template(labels map[string]any, containers ...map[string]any) map[string]any {
	cs := make([]any, len(containers))
	for i, c := range containers {
		cs[i] = c
	}
	return map[string]any{"metadata": map[string]any{"labels": labels}, "spec": map[string]any{"containers": cs}}
}

func container(name, image string, args ...string) map[string]any {
	c := map[string]any{"name": name, "image": image}
	if len(args) > 0 {
		as := make([]any, len(args))
		for i, a := range args {
			as[i] = a
		}
		c["args"] = as
	}
	return c
}

// replicaSet adds a ReplicaSet of a Deployment with n pods.
func (b *builder) replicaSet(deployment string, parent int, n int, labels map[string]any, tmpl map[string]any, c ctr) {
	hash := suffix(deployment + "/rs")[:4] + "5d9c"
	rsLabels := map[string]any{"pod-template-hash": hash}
	for k, v := range labels {
		rsLabels[k] = v
	}
	rs := object("apps/v1", "ReplicaSet", deployment+"-"+hash)
	rs.SetLabels(stringMap(rsLabels))
	rs.Object["spec"] = map[string]any{
		"replicas": int64(n), "selector": map[string]any{"matchLabels": rsLabels},
		"template": withLabels(tmpl, rsLabels),
	}
	ri := b.add(rs, parent)
	for k := range n {
		b.pod(fmt.Sprintf("%s-%s", rs.GetName(), suffix(fmt.Sprint(rs.GetName(), k))), ri, rsLabels, c)
	}
}

func withLabels(tmpl map[string]any, labels map[string]any) map[string]any {
	out := map[string]any{"metadata": map[string]any{"labels": labels}, "spec": tmpl["spec"]}
	return out
}

// vllmDeployment: Deployment -> ReplicaSet -> pods (and an old ReplicaSet
// scaled to zero).
func (b *builder) vllmDeployment(name, image string, pods int, oldRS bool) {
	labels := map[string]any{"app": name}
	tmpl := template(labels, container("vllm", image, "--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "1"))
	d := object("apps/v1", "Deployment", name)
	d.SetAnnotations(map[string]string{"model.aibom.dev/base": "meta-llama/Llama-3.1-8B-Instruct"})
	d.Object["spec"] = map[string]any{"replicas": int64(pods), "selector": map[string]any{"matchLabels": labels}, "template": tmpl}
	di := b.add(d, -1)
	b.runs(image)
	if oldRS {
		old := object("apps/v1", "ReplicaSet", name+"-7c6b5a4d3")
		oldLabels := map[string]any{"app": name, "pod-template-hash": "7c6b5a4d3"}
		old.SetLabels(stringMap(oldLabels))
		old.Object["spec"] = map[string]any{"replicas": int64(0), "selector": map[string]any{"matchLabels": oldLabels},
			"template": withLabels(template(nil, container("vllm", imageVLLMOld)), oldLabels)}
		b.add(old, di)
	}
	b.replicaSet(name, di, pods, labels, tmpl, ctr{"vllm", image})
}

// servingGroupPods: a ServingGroup whose spec embeds the pod template, and
// the pods its operator created from it, each controlled by the group.
func (b *builder) servingGroupPods(name string, pods int) {
	labels := map[string]any{"serving.example.com/group": name}
	g := object("serving.example.com/v1alpha1", "ServingGroup", name)
	g.Object["spec"] = map[string]any{"replicas": int64(pods),
		"template": template(labels, container("vllm", imageVLLM, "--model", "Qwen/Qwen2.5-7B-Instruct"))}
	gi := b.add(g, -1)
	b.runs(imageVLLM)
	for k := range pods {
		b.pod(fmt.Sprintf("%s-%d", name, k), gi, labels, ctr{"vllm", imageVLLM})
	}
}

// servingGroupDeployment: a ServingGroup that names its model and has its
// operator create a Deployment (which the group's document absorbs).
func (b *builder) servingGroupDeployment(name string) {
	g := object("serving.example.com/v1alpha1", "ServingGroup", name)
	g.Object["spec"] = map[string]any{"modelName": "Qwen/Qwen2.5-7B-Instruct", "engine": "vllm"}
	gi := b.add(g, -1)
	labels := map[string]any{"app": name}
	tmpl := template(labels, container("vllm", imageVLLM, "--model", "Qwen/Qwen2.5-7B-Instruct"))
	d := object("apps/v1", "Deployment", name)
	d.Object["spec"] = map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": labels}, "template": tmpl}
	di := b.add(d, gi)
	b.absorb(d)
	b.runs(imageVLLM)
	b.replicaSet(name, di, 1, labels, tmpl, ctr{"vllm", imageVLLM})
}

// cronJob: CronJob -> jobs Jobs -> a pod each.
func (b *builder) cronJob(name string, jobs int) {
	spec := map[string]any{"restartPolicy": "Never", "containers": []any{
		container("eval", imageTGI, "--model-id", "mistralai/Mistral-7B-Instruct-v0.3"),
	}}
	cj := object("batch/v1", "CronJob", name)
	cj.Object["spec"] = map[string]any{"schedule": "0 2 * * *", "jobTemplate": map[string]any{
		"spec": map[string]any{"template": map[string]any{"spec": spec}},
	}}
	ci := b.add(cj, -1)
	b.runs(imageTGI)
	for k := range jobs {
		j := object("batch/v1", "Job", fmt.Sprintf("%s-2918028%d", name, k))
		j.Object["spec"] = map[string]any{"template": map[string]any{"spec": spec}}
		ji := b.add(j, ci)
		b.absorb(j)
		b.pod(j.GetName()+"-"+suffix(j.GetName()), ji, map[string]any{"job-name": j.GetName()}, ctr{"eval", imageTGI})
	}
}

// nimService: NIMService -> Deployment -> ReplicaSet -> pods.
func (b *builder) nimService(name string, pods int) {
	image := imageNIMRepo + ":" + imageNIMTag
	n := object("apps.nvidia.com/v1alpha1", "NIMService", name)
	n.Object["spec"] = map[string]any{
		"image":      map[string]any{"repository": imageNIMRepo, "tag": imageNIMTag, "pullPolicy": "IfNotPresent"},
		"authSecret": "ngc-api-secret",
		"storage":    map[string]any{"nimCache": map[string]any{"name": "meta-llama-3-2-1b-instruct"}},
		"replicas":   int64(pods),
		"expose":     map[string]any{"service": map[string]any{"type": "ClusterIP", "port": int64(8000)}},
	}
	ni := b.add(n, -1)
	b.runs(image)
	labels := map[string]any{"app": name, "app.kubernetes.io/managed-by": "k8s-nim-operator"}
	tmpl := template(labels, container(name+"-ctr", image))
	d := object("apps/v1", "Deployment", name)
	d.Object["spec"] = map[string]any{"replicas": int64(pods), "selector": map[string]any{"matchLabels": labels}, "template": tmpl}
	di := b.add(d, ni)
	b.absorb(d)
	b.replicaSet(name, di, pods, labels, tmpl, ctr{name + "-ctr", image})
}

// leaderWorkerSet: LWS -> leader StatefulSet -> leader pods, each ->
// worker StatefulSet -> worker pods (size-1 per group).
func (b *builder) leaderWorkerSet(name string, replicas, size int) {
	leader := container("vllm-leader", imageVLLM, "--model", "meta-llama/Meta-Llama-3.1-70B-Instruct", "--tensor-parallel-size", "8")
	worker := container("vllm-worker", imageVLLM)
	l := object("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", name)
	l.Object["spec"] = map[string]any{
		"replicas": int64(replicas), "startupPolicy": "LeaderCreated",
		"leaderWorkerTemplate": map[string]any{
			"size":           int64(size),
			"leaderTemplate": template(map[string]any{"role": "leader"}, leader),
			"workerTemplate": template(map[string]any{"role": "worker"}, worker),
		},
	}
	li := b.add(l, -1)
	b.runs(imageVLLM)
	sts := func(stsName string, parent int, n int, labels map[string]any, c map[string]any) int {
		s := object("apps/v1", "StatefulSet", stsName)
		s.SetLabels(stringMap(labels))
		s.Object["spec"] = map[string]any{"replicas": int64(n), "serviceName": name,
			"selector": map[string]any{"matchLabels": labels}, "template": template(labels, c)}
		i := b.add(s, parent)
		b.absorb(s)
		return i
	}
	leaderLabels := map[string]any{"leaderworkerset.sigs.k8s.io/name": name, "leaderworkerset.sigs.k8s.io/worker-index": "0"}
	si := sts(name, li, replicas, leaderLabels, leader)
	for g := range replicas {
		leaderPod := fmt.Sprintf("%s-%d", name, g)
		b.pod(leaderPod, si, leaderLabels, ctr{"vllm-leader", imageVLLM})
		pi := len(b.c.Nodes) - 1
		workerLabels := map[string]any{"leaderworkerset.sigs.k8s.io/name": name, "leaderworkerset.sigs.k8s.io/group-index": fmt.Sprint(g)}
		wi := sts(leaderPod, pi, size-1, workerLabels, worker)
		for k := 1; k < size; k++ {
			b.pod(fmt.Sprintf("%s-%d", leaderPod, k), wi, workerLabels, ctr{"vllm-worker", imageVLLM})
		}
	}
}

// dgd is a v1beta1 DynamoGraphDeployment with the given components.
func dgd(name, framework string, annotations map[string]string, components ...map[string]any) *unstructured.Unstructured {
	g := object("nvidia.com/v1beta1", "DynamoGraphDeployment", name)
	if annotations != nil {
		g.SetAnnotations(annotations)
	}
	cs := make([]any, len(components))
	for i, c := range components {
		cs[i] = c
	}
	g.Object["spec"] = map[string]any{"backendFramework": framework, "components": cs}
	return g
}

func component(name, typ, image string, extra map[string]any, args ...string) map[string]any {
	module := "dynamo.vllm"
	if image == imageDynamoSG {
		module = "dynamo.sglang"
	}
	if typ == "frontend" {
		module = "dynamo.frontend"
	}
	main := map[string]any{"name": "main", "image": image, "command": []any{"python3", "-m", module}}
	if len(args) > 0 {
		as := make([]any, len(args))
		for i, a := range args {
			as[i] = a
		}
		main["args"] = as
	}
	c := map[string]any{"name": name, "type": typ, "replicas": int64(1),
		"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{main}}}}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// dynamoDCD: DGD (component provider) -> DCD per component -> Deployment ->
// ReplicaSet -> pods.
func (b *builder) dynamoDCD(name string, workerPods int) {
	frontend := component("Frontend", "frontend", imageDynamo, nil, "--http-port", "8000")
	worker := component("VllmDecodeWorker", "worker", imageDynamo, map[string]any{"modelRef": map[string]any{"name": "Qwen/Qwen3-0.6B"}}, "--model", "Qwen/Qwen3-0.6B")
	gi := b.add(dgd(name, "vllm", map[string]string{"nvidia.com/enable-grove": "false"}, frontend, worker), -1)
	b.runs(imageDynamo)
	for _, c := range []map[string]any{frontend, worker} {
		compName := c["name"].(string)
		dcdName := name + "-" + lower(compName)
		d := object("nvidia.com/v1beta1", "DynamoComponentDeployment", dcdName)
		spec := map[string]any{"backendFramework": "vllm"}
		for k, v := range c {
			spec[k] = v
		}
		d.Object["spec"] = spec
		di := b.add(d, gi)
		b.absorb(d)
		labels := map[string]any{"nvidia.com/selector": dcdName, "nvidia.com/dynamo-graph-deployment-name": name,
			"nvidia.com/dynamo-component": compName}
		tmpl := template(labels, container("main", imageDynamo))
		dep := object("apps/v1", "Deployment", dcdName)
		dep.Object["spec"] = map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": labels}, "template": tmpl}
		depi := b.add(dep, di)
		b.absorb(dep)
		pods := 1
		if compName != "Frontend" {
			pods = workerPods
		}
		b.replicaSet(dcdName, depi, pods, labels, tmpl, ctr{"main", imageDynamo})
	}
}

// groveClique: DGD (Grove provider) -> PodCliqueSet -> a PodClique per
// component -> pods. Grove kinds are walk-only: nothing is absorbed.
func (b *builder) groveClique(name string) {
	frontend := component("Frontend", "frontend", imageDynamoSG, nil, "--http-port", "8000")
	worker := component("SglangDecodeWorker", "worker", imageDynamoSG, nil, "--model-path", "Qwen/Qwen3-0.6B")
	gi := b.add(dgd(name, "sglang", nil, frontend, worker), -1)
	b.runs(imageDynamoSG)
	pcs := b.podCliqueSet(name, gi, []string{"frontend", "sglangdecodeworker"}, nil)
	for _, clique := range []string{"frontend", "sglangdecodeworker"} {
		b.podClique(name, name+"-0-"+clique, clique, pcs, 1)
	}
}

// groveScalingGroup: DGD -> PodCliqueSet -> PodClique (frontend) -> pod,
// and PodCliqueSet -> PodCliqueScalingGroup -> leader and worker PodCliques
// -> pods, for a multinode decode component.
func (b *builder) groveScalingGroup(name string) {
	frontend := component("Frontend", "frontend", imageDynamo, nil, "--http-port", "8000")
	decode := component("decode", "decode", imageDynamo, map[string]any{"multinode": map[string]any{"nodeCount": int64(2)}}, "--model", "Qwen/Qwen3-32B")
	gi := b.add(dgd(name, "vllm", nil, frontend, decode), -1)
	b.runs(imageDynamo)
	pcs := b.podCliqueSet(name, gi, []string{"frontend", "decode-ldr", "decode-wkr"}, []any{
		map[string]any{"name": "decode", "cliqueNames": []any{"decode-ldr", "decode-wkr"}, "replicas": int64(1), "minAvailable": int64(1)},
	})
	b.podClique(name, name+"-0-frontend", "frontend", pcs, 1)
	pcsgName := name + "-0-decode"
	pcsg := object("grove.io/v1alpha1", "PodCliqueScalingGroup", pcsgName)
	pcsg.SetLabels(map[string]string{"nvidia.com/dynamo-graph-deployment-name": name, "grove.io/podcliqueset": name})
	pcsg.Object["spec"] = map[string]any{"replicas": int64(1), "minAvailable": int64(1), "cliqueNames": []any{"decode-ldr", "decode-wkr"}}
	gsi := b.add(pcsg, pcs)
	for _, role := range []string{"decode-ldr", "decode-wkr"} {
		b.podClique(name, pcsgName+"-0-"+role, role, gsi, 1)
	}
}

func (b *builder) podCliqueSet(name string, parent int, cliques []string, groups []any) int {
	var cs []any
	for _, c := range cliques {
		cs = append(cs, map[string]any{"name": c, "spec": map[string]any{"roleName": c, "replicas": int64(1),
			"podSpec": map[string]any{"containers": []any{container("main", b.image())}}}})
	}
	tmpl := map[string]any{"cliques": cs}
	if groups != nil {
		tmpl["podCliqueScalingGroups"] = groups
	}
	pcs := object("grove.io/v1alpha1", "PodCliqueSet", name)
	pcs.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "dynamo-operator", "nvidia.com/dynamo-graph-deployment-name": name})
	pcs.Object["spec"] = map[string]any{"replicas": int64(1), "template": tmpl}
	return b.add(pcs, parent)
}

func (b *builder) podClique(graph, name, role string, parent, pods int) {
	labels := map[string]any{"nvidia.com/dynamo-graph-deployment-name": graph, "grove.io/podclique": name,
		"app.kubernetes.io/managed-by": "grove-operator", "grove.io/podgang": graph + "-0"}
	pc := object("grove.io/v1alpha1", "PodClique", name)
	pc.SetLabels(stringMap(labels))
	pc.Object["spec"] = map[string]any{"roleName": role, "replicas": int64(pods),
		"podSpec": map[string]any{"containers": []any{container("main", b.image())}}}
	pi := b.add(pc, parent)
	for k := range pods {
		b.pod(name+"-"+suffix(fmt.Sprint(name, k)), pi, labels, ctr{"main", b.image()})
	}
}

// image is the Dynamo runtime image of the chain's graph.
func (b *builder) image() string {
	if b.c.Shape == ShapeGroveClique {
		return imageDynamoSG
	}
	return imageDynamo
}

func lower(s string) string {
	out := []byte(s)
	for i, c := range out {
		if 'A' <= c && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return string(out)
}
