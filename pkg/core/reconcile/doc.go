// Package reconcile is the controller's reconcile loop: the event mapper
// that turns informer events into requests (one ownership level per queue
// item), the Reconciler that turns a root into its AIBOM (at most a create
// and a status write, nothing when nothing changed), references beside
// ownership, the periodic re-verification, the run-time configuration and
// what is offered to sinks.
//
// It reads every object through the graph's Store interface and receives
// events through its Feed; it imports the graph, never the watches.
package reconcile
