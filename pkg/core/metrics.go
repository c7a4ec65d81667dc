package core

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reconcile outcomes, the values of the outcome label.
const (
	OutcomeCreated      = "created"
	OutcomeUpdated      = "updated"
	OutcomeUnchanged    = "unchanged"
	OutcomeRolledUp     = "rolled_up"
	OutcomeNotOptedIn   = "not_opted_in"
	OutcomeDeleted      = "deleted"
	OutcomeScrapeFailed = "scrape_failed"
	OutcomeError        = "error"
)

var (
	reconcileOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_workload_reconcile_outcomes_total",
		Help: "Workload reconciles by tracked kind and outcome (created, updated, unchanged, rolled_up, not_opted_in, deleted, scrape_failed, error).",
	}, []string{"kind", "outcome"})

	rollupUnresolved = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_rollup_unresolved_total",
		Help: "Upward walks that could not pass an owner (forbidden, not_found, no_match, uid_mismatch, depth_cap, untracked_kind, error), by the owner's kind and reason; the workload is reported as a root.",
	}, []string{"kind", "reason"})
)

func init() {
	metrics.Registry.MustRegister(reconcileOutcomes, rollupUnresolved)
}
