package reconcile

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Settings are what the controller's configuration (an AIBOMConfig) may
// change while it runs: which namespaces are in scope, which adapters are
// enabled (Registry.SetEnabled) and the inline cap. Reads are cheap and
// safe from every worker; Reconfigure changes them.
type Settings struct {
	mu       sync.RWMutex
	selector labels.Selector
	maxBytes int
	adapters []string // nil: all
}

// NewSettings returns settings with the default selector and an inline cap.
func NewSettings(maxDocumentBytes int) *Settings {
	return &Settings{selector: graph.DefaultNamespaceSelector(), maxBytes: maxDocumentBytes}
}

// Selects reports whether a namespace with these labels is in scope. Nil
// settings use the default selector.
func (s *Settings) Selects(nsLabels map[string]string) bool {
	if s == nil {
		return nsLabels[graph.OptInLabel] == "true"
	}
	s.mu.RLock()
	sel := s.selector
	s.mu.RUnlock()
	return sel.Matches(labels.Set(nsLabels))
}

// MaxDocumentBytes is the inline cap (0: none).
func (s *Settings) MaxDocumentBytes() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.maxBytes
}

// NamespaceSelector returns the selector in force.
func (s *Settings) NamespaceSelector() labels.Selector {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.selector
}

// Config is one complete set of run-time settings.
type Config struct {
	// NamespaceSelector selects the namespaces in scope.
	NamespaceSelector labels.Selector
	// Adapters lists the enabled adapters; nil: every loaded adapter.
	Adapters []string
	// MaxDocumentBytes is the inline cap.
	MaxDocumentBytes int
}

// NamespaceScope is what follows the namespace selector besides the
// reconciler: the watches' caches and enqueue filter (the Supervisor).
type NamespaceScope interface {
	// SetNamespaceSelector changes which namespaces opt in; the namespaces
	// whose opt-in changed are re-evaluated.
	SetNamespaceSelector(sel labels.Selector)
}

// Reconfigurer applies a Config to a running core. Setup's reconciler and
// supervisor make one (NewReconfigurer).
type Reconfigurer struct {
	r     *Reconciler
	scope NamespaceScope
}

// NewReconfigurer ties the reconciler and the namespace scope (the
// supervisor) of one Setup; scope may be nil.
func NewReconfigurer(r *Reconciler, scope NamespaceScope) *Reconfigurer {
	return &Reconfigurer{r: r, scope: scope}
}

// Reconfigure applies c. An invalid c (an adapter not loaded) is an error
// and changes nothing. Then, without a restart: namespaces that leave the
// selector have their AIBOMs deleted and those that enter it are reported
// (through the same path as a changed opt-in label); disabling an adapter
// deletes the AIBOMs of its kinds, and the workloads its kinds absorbed are
// reported on their own, as after a restart without it; a changed inline cap
// rewrites the documents it affects. Only what changed is re-evaluated.
func (c *Reconfigurer) Reconfigure(ctx context.Context, cfg Config) error {
	s := c.r.Settings
	if s == nil {
		return fmt.Errorf("reconfigure: the reconciler has no settings")
	}
	if cfg.NamespaceSelector == nil {
		cfg.NamespaceSelector = graph.DefaultNamespaceSelector()
	}
	if cfg.MaxDocumentBytes <= 0 {
		return fmt.Errorf("reconfigure: inline cap must be positive")
	}
	s.mu.RLock()
	selectorChanged := s.selector.String() != cfg.NamespaceSelector.String()
	adaptersChanged := !slices.Equal(s.adapters, cfg.Adapters) || (s.adapters == nil) != (cfg.Adapters == nil)
	capChanged := s.maxBytes != cfg.MaxDocumentBytes
	s.mu.RUnlock()
	if adaptersChanged {
		if err := c.r.Registry.SetEnabled(cfg.Adapters); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.selector, s.maxBytes, s.adapters = cfg.NamespaceSelector, cfg.MaxDocumentBytes, slices.Clone(cfg.Adapters)
	s.mu.Unlock()
	if selectorChanged {
		if err := c.reselect(ctx); err != nil {
			return err
		}
	}
	if adaptersChanged || capChanged {
		// Every root and every AIBOM subject, paced (Resync).
		go c.r.Resync(ctx, 0)
	}
	return nil
}

// reselect hands the selector in force to the namespace filter the caches
// follow: namespaces that enter it are admitted and reported as at a cold
// start, those that leave it lose their cached objects and their AIBOMs.
func (c *Reconfigurer) reselect(context.Context) error {
	if c.scope != nil {
		c.scope.SetNamespaceSelector(c.r.Settings.NamespaceSelector())
	}
	return nil
}

// Initialize applies c before the manager starts: nothing has been
// evaluated yet, so nothing is re-evaluated.
func (c *Reconfigurer) Initialize(cfg Config) error {
	if cfg.NamespaceSelector == nil {
		cfg.NamespaceSelector = graph.DefaultNamespaceSelector()
	}
	if cfg.MaxDocumentBytes <= 0 {
		return fmt.Errorf("initialize: inline cap must be positive")
	}
	if err := c.r.Registry.SetEnabled(cfg.Adapters); err != nil {
		return err
	}
	s := c.r.Settings
	s.mu.Lock()
	s.selector, s.maxBytes, s.adapters = cfg.NamespaceSelector, cfg.MaxDocumentBytes, slices.Clone(cfg.Adapters)
	s.mu.Unlock()
	if c.scope != nil {
		c.scope.SetNamespaceSelector(cfg.NamespaceSelector)
	}
	return nil
}

// Settings returns the settings the reconfigurer changes.
func (c *Reconfigurer) Settings() *Settings { return c.r.Settings }
