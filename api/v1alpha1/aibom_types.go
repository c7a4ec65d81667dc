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

	// ConditionSynced is True when every configured sink holds the current
	// document (docs/sinks.md); absent when no sink is configured.
	ConditionSynced = "Synced"
	// ConditionSinkFailed is True while a sink's last delivery of the
	// current document failed; its message names the sink and the reason.
	ConditionSinkFailed = "SinkFailed"

	ReasonDocumentWritten = "DocumentWritten"
	// ReasonDelivered: every sink accepted the current document.
	ReasonDelivered = "Delivered"
	// ReasonDeliveryPending: a delivery is queued or being attempted.
	ReasonDeliveryPending = "DeliveryPending"
	// ReasonDeliveryFailed: a sink refused the document, or kept failing
	// until the retry budget ran out; it is delivered again later.
	ReasonDeliveryFailed = "DeliveryFailed"
	// ReasonQueueFull: a sink's queue was full; the document is delivered
	// again later.
	ReasonQueueFull = "QueueFull"
	// ReasonRepositoryNotAllowed: an image of the workload is in a
	// repository the OCI sink may not push referrers to.
	ReasonRepositoryNotAllowed = "RepositoryNotAllowed"
	// ReasonDestinationRefused: a sink's address is refused (loopback,
	// link-local, the API server) and not in spec.allowedDestinations.
	ReasonDestinationRefused = "DestinationRefused"
	// ReasonStoredInSink: the document exceeds the inline cap and is held
	// by a sink, referenced in status.documentRef.
	ReasonStoredInSink    = "StoredInSink"
	ReasonScrapeFailed    = "ScrapeFailed"
	ReasonBuildFailed     = "BuildFailed"
	ReasonOverInlineCap   = "OverInlineCap"
	ReasonWithinInlineCap = "WithinInlineCap"
	// ReasonNotWrittenByController: an AIBOM that is not the controller's
	// AIBOM of its subject (named otherwise): never exported or sent to a
	// sink, deleted when its subject does not exist.
	ReasonNotWrittenByController = "NotWrittenByController"
)

// Subject names the workload an AIBOM describes.
//
// Kind and name are immutable: an AIBOM describes one workload for its whole
// life. When the workload is deleted and re-created under the same name, the
// controller re-points the AIBOM at the new object (uid, and apiVersion when
// the cluster now serves another version), which is the only change allowed.
// +kubebuilder:validation:XValidation:rule="self.kind == oldSelf.kind && self.name == oldSelf.name",message="spec.subject.kind and spec.subject.name are immutable"
type Subject struct {
	// APIVersion of the workload as the controller read it, e.g. apps/v1.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind of the workload, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Name of the workload, in the AIBOM's namespace.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// UID of the workload the document was built for.
	UID string `json:"uid"`
}

// AIBOMSpec names the subject of the document. The controller writes it; it
// is not meant to be edited by people.
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
	// Confidence is the aggregate confidence of the document's facts:
	// declared (read from a field the owner set for it), inferred (derived,
	// e.g. from an image name) or unresolved (not found).
	// +optional
	// +kubebuilder:validation:Enum=declared;inferred;unresolved
	Confidence string `json:"confidence,omitempty"`
}

// Delivery states of a document to one sink.
const (
	DeliveryDelivered = "Delivered"
	DeliveryPending   = "Pending"
	DeliveryFailed    = "Failed"
)

// SinkDelivery is the state of the delivery of this AIBOM's document to one
// sink of the AIBOMConfig. A state other than Delivered is delivered again
// (also after a controller restart).
type SinkDelivery struct {
	// Sink is the name of the sink in the AIBOMConfig.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Sink string `json:"sink"`
	// State is Delivered, Pending or Failed.
	// +kubebuilder:validation:Enum=Delivered;Pending;Failed
	State string `json:"state"`
	// DocumentSHA256 is the hex SHA-256 of the document the state is about
	// (the full document, also when status.document holds a reduced one).
	// +optional
	DocumentSHA256 string `json:"documentSHA256,omitempty"`
	// Location is where the sink holds the document (a URL, a
	// Dependency-Track project, a registry reference).
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Location string `json:"location,omitempty"`
	// Reason is a CamelCase reason of the last failure.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the last failure.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// Attempts counts the attempts of the last delivery.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// LastAttemptTime is when the last attempt ended.
	// +optional
	LastAttemptTime *metav1.Time `json:"lastAttemptTime,omitempty"`
	// NextAttemptTime is when a Pending delivery is tried again.
	// +optional
	NextAttemptTime *metav1.Time `json:"nextAttemptTime,omitempty"`
}

// DocumentReference says where a document too large for the inline cap is
// kept: a sink that accepted it.
type DocumentReference struct {
	// Sink is the name of the sink that holds the document.
	Sink string `json:"sink"`
	// Location is where that sink holds it.
	// +kubebuilder:validation:MaxLength=2048
	Location string `json:"location"`
	// SHA256 is the hex SHA-256 of the document.
	SHA256 string `json:"sha256"`
	// Size is the document's size in bytes.
	Size int `json:"size"`
}

// AIBOMStatus holds the document and how it was made.
type AIBOMStatus struct {
	// ObservedGeneration is the AIBOM's metadata.generation the status was
	// last written for (the generation changes when the subject is
	// re-pointed at a re-created workload).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Document is the CycloneDX 1.6 JSON document, inline.
	// +optional
	Document string `json:"document,omitempty"`
	// DocumentRef, when set, replaces Document: the document exceeds the
	// inline cap and a sink holds it (DocumentSHA256 and DocumentSize are
	// then those of the referenced document).
	// +optional
	DocumentRef *DocumentReference `json:"documentRef,omitempty"`
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
	// Absorbed lists the tracked workloads this root absorbed, as
	// Kind.group/name (Kind/name for the core group), sorted by kind, group,
	// then name, exactly as the document's aibom.rollup.owned list: at most the first 1000, so that a root
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
	// Sinks is the delivery state of the document to each configured sink.
	// +optional
	// +listType=map
	// +listMapKey=sink
	// +kubebuilder:validation:MaxItems=16
	Sinks []SinkDelivery `json:"sinks,omitempty"`
	// Conditions explain the state: Ready, Truncated, and with sinks
	// configured Synced and SinkFailed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AIBOM is the AI Bill of Materials of one workload: a CycloneDX 1.6 JSON
// document in status.document, written by the aibom controller for every
// tracked workload that no other tracked workload controls, in namespaces
// labelled aibom.dev/enabled=true. Read-only to people: the controller
// creates, updates and deletes AIBOMs.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=aibm,categories=aibom-all
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Subject-Kind",type=string,JSONPath=`.spec.subject.kind`
// +kubebuilder:printcolumn:name="Subject",type=string,JSONPath=`.spec.subject.name`
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.status.summary.runtime`
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=`.status.summary.model`
// +kubebuilder:printcolumn:name="Absorbed",type=integer,JSONPath=`.status.absorbedCount`
// +kubebuilder:printcolumn:name="Confidence",type=string,JSONPath=`.status.summary.confidence`
// +kubebuilder:printcolumn:name="Reason",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Images",type=integer,priority=1,JSONPath=`.status.summary.images`
// +kubebuilder:printcolumn:name="Bytes",type=integer,priority=1,JSONPath=`.status.documentSize`
// +kubebuilder:printcolumn:name="Changed",type=date,priority=1,JSONPath=`.status.lastChanged`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AIBOM struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the workload the document describes.
	Spec AIBOMSpec `json:"spec,omitempty"`
	// Status holds the document, a summary of it and its conditions.
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
