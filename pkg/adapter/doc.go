// Package adapter is the contract between the kind-neutral core and the code
// that knows one operator's kinds.
//
// An Adapter declares the kinds it knows (Kinds) and, for the kinds it tracks,
// reads one object and returns what it found (Scrape). It never talks to the
// API server: the core fetches objects, walks ownership, attributes pods,
// resolves running digests and writes documents, the same way for every
// adapter, compiled in or served out of process.
//
// A kind has one of three roles:
//
//   - RoleTracked: a workload. It is reported as a root with its own AIBOM
//     unless another tracked kind controls it, directly or through a chain of
//     controller ownerReferences; then the owner's document absorbs it and lists
//     it under aibom.rollup.owned.<i>.
//   - RoleWalkOnly: an intermediate that only connects owners to descendants
//     (ReplicaSet, Grove's PodClique). It is read for the ownership walk and
//     the closure, never reported, never listed. Pod is walk-only too, but it
//     is the core's kind, registered whatever adapters are enabled: an
//     adapter does not declare it.
//   - RoleReferenced: an object a tracked object names but does not own
//     (a NIMService's NIMCache, a KServe ServingRuntime). Scrape looks it up
//     by kind and name through the Resolver in its context (Resolve): in the
//     root's namespace, or at cluster scope for a Kind.ClusterScoped kind.
//     It is never walked or reported; the document records each reference
//     and whether it resolved, and a change to the object re-reconciles the
//     roots that used it. A reference that cannot be read is a finding with
//     confidence Unresolved, never an error.
//
// Findings carry a confidence and an evidence locator for every fact, so that
// an auditor can trace each line of a document to the field it came from. A
// container whose image the operator chooses is reported without one
// (Container.ImageFromPods): the core reads it from the pods' status. Name
// runtimes with the constants of runtimes.go (RuntimeVLLM, PlatformNIM, ...).
package adapter
