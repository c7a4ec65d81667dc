// Package dynamo is the adapter for the NVIDIA Dynamo operator
// (ai-dynamo/dynamo, deploy/operator): DynamoGraphDeployment (DGD) and
// DynamoComponentDeployment (DCD), group nvidia.com, both tracked, read in
// v1beta1 (preferred) or v1alpha1. A DCD that a DGD controls is absorbed by
// the DGD's document; a DCD created on its own is reported as a one-component
// graph.
//
// # Shapes
//
// Scrape dispatches on the object's apiVersion:
//
//   - DGD v1alpha1: spec.services is a map whose key is the component name,
//     iterated in sorted key order. Each service holds the shared component
//     spec: extraPodSpec (an inlined PodSpec) with extraPodSpec.mainContainer
//     (a Container), sidecars in extraPodSpec.containers[] and init containers
//     in extraPodSpec.initContainers[]; componentType, subComponentType,
//     replicas, multinode.nodeCount, modelRef, envs[], volumeMounts[] and
//     extraPodMetadata.
//   - DGD v1beta1: spec.components is a list; each entry has name, type,
//     replicas, multinode.nodeCount, modelRef and podTemplate (a
//     PodTemplateSpec whose container named "main" is the main container).
//   - DCD v1alpha1: the shared spec inlined in spec, named by spec.serviceName
//     (or, when empty, metadata.name, as the operator does).
//   - DCD v1beta1: the v1beta1 component inlined in spec, named by spec.name
//     (or metadata.name).
//
// Both DCD shapes carry spec.backendFramework.
//
// # Locators
//
// v1beta1 components are indexed: "spec.components[1].podTemplate.spec.
// containers[0].args[3](--model)". v1alpha1 services are keyed by the map
// key: "spec.services.VllmDecodeWorker.extraPodSpec.mainContainer.image"
// when the key is made of letters, digits, "_" and "-" (the names the
// operator accepts), "spec.services[odd.key]" otherwise. A DCD's locators
// start at "spec".
//
// # Findings
//
// Per component i (sorted key order in v1alpha1, list order in v1beta1):
//
//   - Containers: every container (init containers, the main container,
//     sidecars), read with the podtemplate scraper, with Group set to the
//     component name. The main container carries PodNames ["main"], the name
//     the operator gives it in the pod; a v1alpha1 main container that has no
//     name in the spec is named "main".
//   - Properties: dynamo.component.<i>.name always; .type
//     (componentType/type), .subComponentType (v1alpha1), .replicas and
//     .nodeCount (multinode.nodeCount) when set. dynamo.backendFramework
//     holds the declared value.
//   - Models: modelRef.name (version modelRef.revision) is Declared
//     (crd_field, "<component>.modelRef.name"). The podtemplate heuristics
//     add model args (--model, --model-path, --served-model-name, ...), model
//     env vars and model.aibom.dev/ annotations (v1alpha1:
//     extraPodMetadata.annotations; v1beta1: podTemplate.metadata.annotations).
//     When modelRef is set, claims of the component that name the same model
//     are dropped: the CRD field is the stronger evidence of the same fact.
//     Graph env (v1alpha1 spec.envs, v1beta1 spec.env) and service env
//     (v1alpha1 envs) are read once where they are written; their literal
//     values also expand "$(VAR)" references in the main container's args,
//     the container's own env winning, then the service's, then the graph's.
//   - Data: podtemplate's model-path mounts, and v1alpha1 service
//     volumeMounts[] (which name entries of spec.pvcs) whose mountPoint is a
//     model path, as kind "pvc".
//   - Runtimes: spec.backendFramework (graph or DCD; sglang, vllm, trtllm) is
//     one Declared runtime (crd_field, "spec.backendFramework"), named
//     "sglang", "vllm" or "tensorrt-llm". When it is absent, the backend is
//     detected as the operator does (DetectBackend), for components of type
//     worker, prefill or decode only: Inferred, located at the command or args
//     element naming the module. The podtemplate image-pattern runtimes
//     (Inferred) are always kept: they are separate evidence.
//
// Workload annotations (model.aibom.dev/) are read once for the object.
// Findings.Scrapers is [Scraper(), podtemplate.Scraper()].
//
// # Malformed input
//
// A field read above that has the wrong type (services a list, components
// an object, an image a number, an argument an object, a component without a
// name in a v1beta1 graph) is an error naming its locator, and no findings
// are returned. Absent and null fields are "not set". Scrape never panics
// and is deterministic.
package dynamo
