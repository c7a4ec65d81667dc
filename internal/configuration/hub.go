// Package configuration runs the controller's AIBOMConfig: it applies the
// object named "default" to the running core (namespace selector, enabled
// adapters, inline cap) and to the sinks, reports on the object's status
// whether it runs, writes the sinks' delivery results into the AIBOMs'
// statuses, and delivers again what a sink has not got. Without the object
// the controller runs on its flags.
package configuration

import (
	"slices"
	"sort"
	"sync"

	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/sink"
)

// Hub connects the core's reconciler to the sink dispatcher
// (reconcile.DocumentSinks).
type Hub struct {
	Dispatcher *sink.Dispatcher

	mu    sync.RWMutex
	names []string
}

// Names implements reconcile.DocumentSinks.
func (h *Hub) Names() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.names
}

// SetSinks replaces the sinks.
func (h *Hub) SetSinks(sinks []sink.Sink) {
	names := make([]string, 0, len(sinks))
	for _, s := range sinks {
		names = append(names, s.Name())
	}
	sort.Strings(names)
	h.Dispatcher.SetSinks(sinks)
	h.mu.Lock()
	h.names = slices.Clip(names)
	h.mu.Unlock()
}

// Offer implements reconcile.DocumentSinks.
func (h *Hub) Offer(ev reconcile.DocumentEvent) {
	out := sink.Event{
		Op:       sink.OpWrite,
		AIBOM:    ev.AIBOM,
		Subject:  sink.Subject{APIVersion: ev.Subject.APIVersion, Kind: ev.Subject.Kind, Name: ev.Subject.Name, UID: ev.Subject.UID},
		Document: ev.Document,
		SHA256:   ev.SHA256,
		Images:   ev.Images,
		// Reloadable: read again with Options.Load.
		Reloadable: ev.Reloadable,
	}
	if ev.Deleted {
		out.Op = sink.OpDelete
	}
	if ev.To == nil {
		h.Dispatcher.Offer(out)
		return
	}
	h.Dispatcher.OfferTo(ev.To, out)
}
