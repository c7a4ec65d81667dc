// Package adapter is the contract between the kind-neutral core and the code
// that knows one operator's kinds.
//
// An Adapter declares the kinds it knows (Kinds) and, for the kinds it tracks,
// reads one object and returns what it found (Scrape). It never talks to the
// API server: the core fetches objects, walks ownership, attributes pods,
// resolves running digests and writes documents, the same way for every
// adapter, compiled in or served out of process.
//
// A kind has one of two roles:
//
//   - RoleTracked: a workload. It is reported as a root with its own AIBOM
//     unless another tracked kind controls it, directly or through a chain of
//     controller ownerReferences; then the owner's document absorbs it and lists
//     it under aibom.rollup.owned.<i>.
//   - RoleWalkOnly: an intermediate that only connects owners to descendants
//     (ReplicaSet, Pod, Grove's PodClique). It is read for the ownership walk and
//     the closure, never reported, never listed.
//
// Findings carry a confidence and an evidence locator for every fact, so that
// an auditor can trace each line of a document to the field it came from.
package adapter
