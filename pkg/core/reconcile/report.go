package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
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
	// Unmatched is true when the root shows no AI signal (see
	// Inputs.Unmatched): unless every root is reported, it gets no AIBOM.
	Unmatched bool
}

// BuildReport scrapes a root through its adapter, resolves running digests
// from its attributed pods and builds its document. It reads nothing from the
// cluster: the controller and the command line get the same bytes from the
// same objects.
func BuildReport(ctx context.Context, entry graph.Entry, obj *unstructured.Unstructured, desc graph.Descendants, tool document.Tool, maxBytes int) Report {
	return GatherInputs(ctx, entry, obj, desc, tool, maxBytes).Build()
}

// Inputs is everything a root's document is built from. Its Hash lets a
// reconcile whose inputs did not change skip building the document at all.
type Inputs struct {
	document.Input
	// ScrapeErr is the adapter's error, if the scrape failed.
	ScrapeErr error
	// Absorbed counts the tracked descendants.
	Absorbed int
	// Hash covers every field above.
	Hash string
	// Referenced lists the references the scrape looked up, as named (the
	// index of referrers keys on them); Input.References holds them
	// redacted, for the document. Not hashed: Input.References is.
	Referenced []document.Reference
}

// GatherInputs scrapes a root and resolves its digests: the cheap half of
// BuildReport.
func GatherInputs(ctx context.Context, entry graph.Entry, obj *unstructured.Unstructured, desc graph.Descendants, tool document.Tool, maxBytes int) Inputs {
	in := Inputs{Input: document.Input{Subject: subjectOf(entry, obj), Tool: tool, Owned: desc.Owned(), MaxBytes: maxBytes, Created: newestCreated(obj, desc.Tracked)}, Absorbed: len(desc.Tracked)}
	// Every reference the scrape looks up is checked against the adapter's
	// declarations, recorded and listed in the document.
	rec := newRecordingResolver(ctx, entry.Adapter, obj.GetNamespace())
	in.Findings, in.ScrapeErr = scrapeSafely(adapter.WithResolver(ctx, rec), entry.Adapter, obj)
	in.Referenced = rec.references()
	in.References = redactReferences(in.Referenced)
	if in.ScrapeErr == nil {
		sanitize(ctx, entry.Adapter.Name(), &in.Findings)
		in.Images, in.Digests = resolveImagesAndDigests(&in.Findings, desc)
	}
	in.Hash = in.hash()
	return in
}

// newestCreated is when the newest of the root and the workloads it
// absorbs was created (zero when none says): the document's timestamp.
// Pods are left out, so that a pod replaced by its twin rewrites nothing.
func newestCreated(root client.Object, absorbed []client.Object) time.Time {
	newest := root.GetCreationTimestamp().Time
	for _, o := range absorbed {
		if t := o.GetCreationTimestamp().Time; t.After(newest) {
			newest = t
		}
	}
	return newest
}

// buildRevision is part of every input hash: bump it whenever the same
// inputs start to give a different document or status (a changed builder or
// scraper), so that every AIBOM is rewritten once after an upgrade even when
// the version string did not change (development builds).
const buildRevision = 6 // 6: native fields first (no properties repeating tools, the subject's name, an image's reference or its hash), metadata.timestamp, NGC purls, bare skeletons; 5: absorbed workloads named with their API group (<Kind>.<group>/<name>), never merged; 4: one component per identity, native evidence, purls, dependencies, compact JSON; 3: runtimes, platforms, models, frameworks and accelerators as the pod-template scraper 0.2.0 reads them

func (in Inputs) hash() string {
	scrapeErr := ""
	if in.ScrapeErr != nil {
		scrapeErr = in.ScrapeErr.Error()
	}
	// Findings and digests are plain data: their JSON is deterministic.
	data, err := json.Marshal(struct {
		Revision  int
		Input     document.Input
		ScrapeErr string
		Absorbed  int
	}{buildRevision, in.Input, scrapeErr, in.Absorbed})
	if err != nil { // not reachable for plain data; never skip a write on it
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Build builds the document and the status facts from the inputs.
func (in Inputs) Build() Report {
	rep := Report{
		Unmatched: in.Unmatched(),
		Status:    v1alpha1.AIBOMStatus{Absorbed: capAbsorbed(in.Owned), AbsorbedCount: in.Absorbed, InputHash: in.Hash},
		Ready:     metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonDocumentWritten, Message: "document reflects the workload's current inputs"},
	}
	if in.ScrapeErr != nil {
		rep.ScrapeErr = in.ScrapeErr
		rep.Ready = metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonScrapeFailed, Message: in.ScrapeErr.Error()}
		return rep
	}
	res, err := document.Build(in.Input)
	if err != nil {
		rep.BuildErr = err
		rep.Ready = metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonBuildFailed, Message: err.Error()}
	}
	if res.JSON != nil {
		rep.Status.Document, rep.Status.DocumentSHA256, rep.Status.DocumentSize = string(res.JSON), res.SHA256, len(res.JSON)
		rep.Status.Summary = summaryOf(res.Summary)
		rep.Truncated = &metav1.Condition{Type: v1alpha1.ConditionTruncated, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonWithinInlineCap, Message: "document within the inline cap"}
		switch {
		case res.PropertiesDropped > 0:
			rep.Truncated.Status, rep.Truncated.Reason = metav1.ConditionTrue, v1alpha1.ReasonOverInlineCap
			rep.Truncated.Message = fmt.Sprintf("every component (%d) and %d document properties dropped to fit the inline cap of %d bytes: only the workload, the roll-up's count and the match are kept", res.Truncated, res.PropertiesDropped, in.MaxBytes)
		case res.Truncated > 0:
			rep.Truncated.Status, rep.Truncated.Reason = metav1.ConditionTrue, v1alpha1.ReasonOverInlineCap
			rep.Truncated.Message = fmt.Sprintf("%d lowest-value components dropped to fit the inline cap of %d bytes", res.Truncated, in.MaxBytes)
		}
	}
	return rep
}

// Unmatched reports whether the root shows no AI signal: its findings,
// merged with those of every workload it absorbed, name no runtime, model,
// framework, model storage or accelerator (adapter.Findings.Match). A root
// whose scrape failed is never unmatched: nothing is decided on a failure.
func (in Inputs) Unmatched() bool {
	if in.ScrapeErr != nil {
		return false
	}
	_, ok := in.Findings.Match()
	return !ok
}

// capAbsorbed keeps the first document.MaxOwnedListed absorbed workloads
// (owned is sorted by kind, then name) for status.absorbed, as the document
// does; status.absorbedCount stays exact. A root absorbing thousands of
// workloads must still fit in one etcd object.
func capAbsorbed(owned []string) []string {
	if len(owned) <= document.MaxOwnedListed {
		return owned
	}
	return owned[:document.MaxOwnedListed:document.MaxOwnedListed]
}

// resolveImagesAndDigests reads from the attributed pods the images of the
// containers that leave them to the pods, then every container's running
// digest. An image read from pod status reaches the document, so it is
// redacted like an adapter's finding, each masking recorded in f.
func resolveImagesAndDigests(f *adapter.Findings, desc graph.Descendants) ([]document.ContainerImage, []document.ContainerDigest) {
	pods := podsOf(desc.Pods)
	images := digest.ResolveImages(f.Containers, pods)
	digests := digest.ResolveWithImages(f.Containers, images, pods)
	for i := range images {
		if images[i].Image != "" {
			images[i].Image = podtemplate.RedactInto(images[i].Image, images[i].Evidence.Locator, f)
		}
	}
	return images, digests
}
