package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons used on an AIBOM.
const (
	// ConditionReady is True when the document reflects the subject's current
	// inputs.
	ConditionReady = "Ready"
	// ConditionTruncated is True when the document was reduced to fit the
	// inline cap.
	ConditionTruncated = "Truncated"

	ReasonDocumentWritten = "DocumentWritten"
	ReasonScrapeFailed    = "ScrapeFailed"
	ReasonBuildFailed     = "BuildFailed"
	ReasonOverInlineCap   = "OverInlineCap"
	ReasonWithinInlineCap = "WithinInlineCap"
)

// Subject names the workload an AIBOM describes.
type Subject struct {
	// APIVersion of the workload, e.g. apps/v1.
	APIVersion string `json:"apiVersion"`
	// Kind of the workload, e.g. Deployment.
	Kind string `json:"kind"`
	// Name of the workload, in the AIBOM's namespace.
	Name string `json:"name"`
	// UID of the workload the document was built for.
	UID string `json:"uid"`
}

// AIBOMSpec names the subject of the document.
type AIBOMSpec struct {
	// Subject is the reported workload (a root: no tracked kind controls it).
	Subject Subject `json:"subject"`
}

// Summary is a short digest of the document for kubectl get.
type Summary struct {
	// Runtime is the strongest serving-runtime claim, e.g. vllm.
	// +optional
	Runtime string `json:"runtime,omitempty"`
	// Models lists the model names claimed, sorted.
	// +optional
	Models []string `json:"models,omitempty"`
	// Model is the first model, for the printer column.
	// +optional
	Model string `json:"model,omitempty"`
	// Images is the number of container images in the document: zero for a
	// workload whose images live elsewhere (a KServe model served by the
	// runtime it names, an Ollama model).
	// +optional
	Images int `json:"images"`
	// Confidence is the aggregate confidence: declared, inferred or unresolved.
	// +optional
	Confidence string `json:"confidence,omitempty"`
}

// AIBOMStatus holds the document and how it was made.
type AIBOMStatus struct {
	// Document is the CycloneDX 1.6 JSON document, inline.
	// +optional
	Document string `json:"document,omitempty"`
	// DocumentSHA256 is the hex SHA-256 of Document.
	// +optional
	DocumentSHA256 string `json:"documentSHA256,omitempty"`
	// DocumentSize is the size of Document in bytes.
	// +optional
	DocumentSize int `json:"documentSize,omitempty"`
	// InputHash is the hash of everything the document was built from; a
	// reconcile whose inputs hash the same writes nothing.
	// +optional
	InputHash string `json:"inputHash,omitempty"`
	// Absorbed lists the tracked workloads this root absorbed, as Kind/name,
	// sorted by kind then name: at most the first 1000, so that a root
	// absorbing thousands of workloads still fits in one object.
	// +optional
	Absorbed []string `json:"absorbed,omitempty"`
	// AbsorbedCount is the exact number of absorbed workloads (more than
	// len(Absorbed) when the list is capped), for the printer column.
	// +optional
	AbsorbedCount int `json:"absorbedCount,omitempty"`
	// Summary is a short digest of the document.
	// +optional
	Summary Summary `json:"summary,omitempty"`
	// LastChanged is when the document last changed.
	// +optional
	LastChanged *metav1.Time `json:"lastChanged,omitempty"`
	// Conditions explain the state: Ready, Truncated.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AIBOM is the AI Bill of Materials of one workload.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=aibom,categories=all
// +kubebuilder:printcolumn:name="Subject-Kind",type=string,JSONPath=`.spec.subject.kind`
// +kubebuilder:printcolumn:name="Subject",type=string,JSONPath=`.spec.subject.name`
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.status.summary.runtime`
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=`.status.summary.model`
// +kubebuilder:printcolumn:name="Absorbed",type=integer,JSONPath=`.status.absorbedCount`
// +kubebuilder:printcolumn:name="Confidence",type=string,JSONPath=`.status.summary.confidence`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AIBOM struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AIBOMSpec   `json:"spec,omitempty"`
	Status AIBOMStatus `json:"status,omitempty"`
}

// AIBOMList is a list of AIBOMs.
// +kubebuilder:object:root=true
type AIBOMList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AIBOM `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AIBOM{}, &AIBOMList{})
}
