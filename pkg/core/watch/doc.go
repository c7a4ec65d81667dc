// Package watch keeps the controller's view of the cluster: one informer
// cache per registered kind while the cluster serves it (the Supervisor),
// holding only the objects of opted-in namespaces, reading live the kinds
// that may be listed but not watched, and sending nothing to the API server
// while nothing changes (watch progress deadlines, a CRD watch instead of
// polling).
//
// The Supervisor is the graph.Store the walk, the closure and the reconciler
// read through. It never reconciles: what its informers see goes to an
// Events implementation (the reconcile package's Feed in the controller).
// It imports the graph, never the reconcile loop.
package watch
