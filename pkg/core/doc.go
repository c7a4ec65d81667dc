// Package core is the kind-neutral machinery of the AIBOM controller: the
// registry of kinds that enabled adapters declare, the upward ownership walk,
// the descendant closure, the reconciler that turns a root into a document,
// and the event mapping that keeps documents current.
//
// The core knows no operator by name. Adding an operator means adding an
// adapter (package adapter), never editing this package. The one kind the core
// reads for itself is core/v1 Pod, because resolving running digests from pod
// status is the core's job, done once for every adapter alike.
package core
