// Package core wires the kind-neutral machinery of the AIBOM controller into
// a controller-runtime manager (Setup). The machinery itself is three
// packages that import one way:
//
//   - graph: the registry of kinds that enabled adapters declare, the Store
//     interface every object is read through, the upward ownership walk and
//     the descendant closure;
//   - watch: the supervisor's per-kind caches (the Store in the controller),
//     which follow the opted-in namespaces and tell the reconcile loop what
//     changed through an Events interface;
//   - reconcile: the event mapping, the reconciler that turns a root into a
//     document, references, re-verification and sinks.
//
// The core knows no operator by name. Adding an operator means adding an
// adapter (package adapter), never editing the core. The one kind the core
// reads for itself is core/v1 Pod, because resolving running digests from pod
// status is the core's job, done once for every adapter alike.
package core
