package reconcile

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reconcile outcomes, the values of the outcome label.
const (
	OutcomeCreated    = "created"
	OutcomeUpdated    = "updated"
	OutcomeUnchanged  = "unchanged"
	OutcomeRolledUp   = "rolled_up"
	OutcomeNotOptedIn = "not_opted_in"
	OutcomeDeleted    = "deleted"
	// OutcomeAdapterDisabled: the workload's adapter was turned off at run
	// time (AIBOMConfig); its AIBOM is deleted.
	OutcomeAdapterDisabled = "adapter_disabled"
	// OutcomeUnmatched: the root shows no AI signal and gets no AIBOM (an
	// existing one is deleted); see Reconciler.ReportAll.
	OutcomeUnmatched    = "unmatched"
	OutcomeScrapeFailed = "scrape_failed"
	// OutcomeBuildFailed: the document could not be built (e.g. over the
	// inline cap with every component dropped); the last good one is kept.
	OutcomeBuildFailed = "build_failed"
	// OutcomeKindUnavailable: the workload's kind is not served or its cache
	// has not synced; its AIBOM, if any, is kept.
	OutcomeKindUnavailable = "kind_unavailable"
	// OutcomeOwnerNotSynced: the walk met a registered owner kind whose cache
	// has not synced; nothing was created or deleted, and the workload is
	// retried with backoff.
	OutcomeOwnerNotSynced = "owner_not_synced"
	OutcomeError          = "error"
)

var (
	reconcileOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_workload_reconcile_outcomes_total",
		Help: "Workload reconciles by tracked kind and outcome (created, updated, unchanged, rolled_up, not_opted_in, deleted, scrape_failed, build_failed, kind_unavailable, owner_not_synced, error).",
	}, []string{"kind", "outcome"})

	eventMappings = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_event_mappings_total",
		Help: "Mapping requests resolved by the workers (root_of: one ownership level; descendants; namespace), by op.",
	}, []string{"op"})

	rollupUnresolved = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_rollup_unresolved_total",
		Help: "Upward walks that could not pass an owner (forbidden, not_found, no_match, uid_mismatch, depth_cap, untracked_kind, cycle, error), by the owner's kind and reason; the workload is reported as a root.",
	}, []string{"kind", "reason"})

	closureUnreadable = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_closure_unreadable_total",
		Help: "Root reconciles whose descendant closure could not read a kind (forbidden, not served or not synced), by kind: what lies below that kind's objects, pods and their digests included, is missing from the root's document.",
	}, []string{"kind"})

	podsUnattributed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_pods_unattributed_total",
		Help: "Pods a root reconcile found below a tracked workload but outside the pod owners its adapter declares (for example a pod controlled by a Deployment directly), by the workload's kind: their digests are not attributed (counted once per reconcile that meets them).",
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(foreignAIBOMs, reconcileOutcomes, eventMappings, rollupUnresolved, closureUnreadable, podsUnattributed, propertiesRefused)
}
