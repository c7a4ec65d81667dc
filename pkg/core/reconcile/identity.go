package reconcile

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// ManagedByLabel and ManagedBy mark the AIBOMs this controller writes.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "aibom-controller"
)

// ReasonAIBOMTakenOver is the Event reason when an AIBOM under a workload's
// AIBOM name, which this controller did not write for it, is rewritten.
const ReasonAIBOMTakenOver = "AIBOMTakenOver"

var foreignAIBOMs = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "aibom_foreign_aiboms_total",
	Help: "AIBOMs found under a workload's AIBOM name that this controller did not write for it: taken over (rewritten) or left alone (a delete that would have removed another subject's AIBOM).",
}, []string{"action"})

// foreignSubject says why an existing AIBOM is not this controller's AIBOM
// of obj ("" when it is): it describes another subject, or another writer
// marked it as theirs. An AIBOM without the managed-by label that describes
// obj (written by an earlier version) is ours.
func foreignSubject(existing *v1alpha1.AIBOM, entry graph.Entry, obj *unstructured.Unstructured) string {
	s := existing.Spec.Subject
	switch {
	case s.Kind != entry.Kind.Kind || s.Name != obj.GetName():
		foreignAIBOMs.WithLabelValues("taken_over").Inc()
		return fmt.Sprintf("described %s/%s", s.Kind, s.Name)
	case existing.Labels[ManagedByLabel] != "" && existing.Labels[ManagedByLabel] != ManagedBy:
		foreignAIBOMs.WithLabelValues("taken_over").Inc()
		return fmt.Sprintf("was managed by %q", existing.Labels[ManagedByLabel])
	}
	return ""
}

type workloadKey struct{}

// withWorkload records the workload a reconcile is about, for the checks
// that need it deep in the write path (deleteAIBOM).
func withWorkload(ctx context.Context, req Request) context.Context {
	return context.WithValue(ctx, workloadKey{}, req)
}

func workloadOf(ctx context.Context) (Request, bool) {
	r, ok := ctx.Value(workloadKey{}).(Request)
	return r, ok
}
