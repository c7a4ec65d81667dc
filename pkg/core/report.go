package core

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// Report is what the core computes for one root: its document and the status
// facts derived from it.
type Report struct {
	// Status holds the document, its hash and size, the summary, the absorbed
	// workloads and the input hash (no conditions, no times).
	Status v1alpha1.AIBOMStatus
	// Ready is the Ready condition the status should carry.
	Ready metav1.Condition
	// Truncated is the Truncated condition, nil when no document was built.
	Truncated *metav1.Condition
	// ScrapeErr is the adapter's error, if the scrape failed.
	ScrapeErr error
	// BuildErr is the document builder's error, if any.
	BuildErr error
}

// BuildReport scrapes a root through its adapter, resolves running digests
// from its attributed pods and builds its document. It reads nothing from the
// cluster: the controller and the command line get the same bytes from the
// same objects.
func BuildReport(ctx context.Context, entry Entry, obj *unstructured.Unstructured, desc Descendants, tool document.Tool, maxBytes int) Report {
	rep := Report{
		Status: v1alpha1.AIBOMStatus{Absorbed: desc.Owned(), AbsorbedCount: len(desc.Tracked)},
		Ready:  metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonDocumentWritten, Message: "document reflects the workload's current inputs"},
	}
	findings, err := scrapeSafely(ctx, entry.Adapter, obj)
	if err != nil {
		rep.ScrapeErr = err
		rep.Ready = metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonScrapeFailed, Message: err.Error()}
		rep.Status.InputHash = inputHash(rep.Status, &rep.Ready)
		return rep
	}
	res, err := document.Build(document.Input{
		Subject:  subjectOf(entry, obj),
		Tool:     tool,
		Findings: findings,
		Digests:  resolveDigests(findings, desc),
		Owned:    desc.Owned(),
		MaxBytes: maxBytes,
	})
	if err != nil {
		rep.BuildErr = err
		rep.Ready = metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonBuildFailed, Message: err.Error()}
	}
	if res.JSON != nil {
		rep.Status.Document, rep.Status.DocumentSHA256, rep.Status.DocumentSize = string(res.JSON), res.SHA256, len(res.JSON)
		rep.Status.Summary = summaryOf(res.Summary)
		rep.Truncated = &metav1.Condition{Type: v1alpha1.ConditionTruncated, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonWithinInlineCap, Message: "document within the inline cap"}
		if res.Truncated > 0 {
			rep.Truncated.Status, rep.Truncated.Reason = metav1.ConditionTrue, v1alpha1.ReasonOverInlineCap
			rep.Truncated.Message = fmt.Sprintf("%d lowest-value components dropped to fit the inline cap of %d bytes", res.Truncated, maxBytes)
		}
	}
	rep.Status.InputHash = inputHash(rep.Status, &rep.Ready, rep.Truncated)
	return rep
}

func resolveDigests(f adapter.Findings, desc Descendants) []document.ContainerDigest {
	return digest.Resolve(f.Containers, podsOf(desc.Pods))
}
