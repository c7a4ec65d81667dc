// Package graph is the ownership graph the core reasons over: the registry of
// kinds that enabled adapters declare (tracked roots, walk-only
// intermediates, referenced kinds, and the core's own Pod), the Store
// interface through which every object is read, the upward walk to a
// workload's nearest tracked owner, and the closure of a root's
// descendants.
//
// The graph reads nothing by itself: a Store gives it objects (the watch
// package's caches in the controller, a MemoryStore for files and tests).
// It imports neither the watches nor the reconcile loop.
package graph
