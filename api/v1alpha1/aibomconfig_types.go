package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigName is the name of the one AIBOMConfig the controller reads.
const ConfigName = "default"

// Condition types and reasons used on an AIBOMConfig.
const (
	// ConfigReasonApplied: the configuration of observedGeneration runs.
	ConfigReasonApplied = "Applied"
	// ConfigReasonInvalid: the configuration was refused; the last good one
	// keeps running (status.appliedGeneration).
	ConfigReasonInvalid = "Invalid"
	// ConfigReasonSinkReady: a sink is configured and its credentials read.
	ConfigReasonSinkReady = "SinkReady"
	// ConfigReasonSecretUnavailable: a Secret a sink names cannot be read.
	ConfigReasonSecretUnavailable = "SecretUnavailable"
	// ConfigReasonSinkInvalid: a sink's settings are not usable.
	ConfigReasonSinkInvalid = "SinkInvalid"

	// SinkConditionPrefix prefixes the condition of each sink:
	// "Sink-<name>".
	SinkConditionPrefix = "Sink-"
)

// SecretKeyRef names one key of a Secret in the controller's namespace.
type SecretKeyRef struct {
	// Name of the Secret, in the controller's namespace. The controller
	// may read only the Secrets the install grants it by name (docs/sinks.md).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key in the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// SecretRef names a Secret in the controller's namespace.
type SecretRef struct {
	// Name of the Secret, in the controller's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// WebhookSink posts every document as a structured-mode CloudEvent over
// HTTPS.
type WebhookSink struct {
	// URL is the https:// endpoint.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://')",message="a webhook URL must be https://"
	URL string `json:"url"`
	// CABundle is a PEM bundle of the CAs to trust for the endpoint
	// (default: the system's).
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle string `json:"caBundle,omitempty"`
	// BearerToken is sent as "Authorization: Bearer <token>".
	// +optional
	BearerToken *SecretKeyRef `json:"bearerToken,omitempty"`
	// ClientCertificate is a kubernetes.io/tls Secret (tls.crt, tls.key)
	// presented for mutual TLS.
	// +optional
	ClientCertificate *SecretRef `json:"clientCertificate,omitempty"`
	// SigningKey is the HMAC-SHA256 key of the X-Aibom-Signature header.
	// +optional
	SigningKey *SecretKeyRef `json:"signingKey,omitempty"`
}

// Parent project schemes of the Dependency-Track sink.
const (
	ParentNamespace = "Namespace"
	ParentCluster   = "Cluster"
)

// DependencyTrackSink uploads every document to Dependency-Track
// (PUT /api/v1/bom), one project per workload.
type DependencyTrackSink struct {
	// URL is the base URL of the Dependency-Track API server, e.g.
	// https://dtrack.example.com (without /api).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="a Dependency-Track URL must be http:// or https://"
	URL string `json:"url"`
	// CABundle is a PEM bundle of the CAs to trust (default: the system's).
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle string `json:"caBundle,omitempty"`
	// APIKey is sent as X-Api-Key. The key's team needs BOM_UPLOAD,
	// PROJECT_CREATION_UPLOAD and, to create parents and delete projects,
	// PORTFOLIO_MANAGEMENT.
	APIKey SecretKeyRef `json:"apiKey"`
	// Parent is the parent project of each workload's project: one per
	// Namespace (default) or one per Cluster.
	// +optional
	// +kubebuilder:validation:Enum=Namespace;Cluster
	Parent string `json:"parent,omitempty"`
	// ClusterName is the first part of every project name (default
	// "cluster"): set it per cluster when several report to one server.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ClusterName string `json:"clusterName,omitempty"`
}

// OCISink attaches every document as an OCI referrer (artifact type
// application/vnd.cyclonedx+json) to each image digest the workload runs,
// in the image's own repository.
type OCISink struct {
	// Credentials is a kubernetes.io/dockerconfigjson Secret; without it the
	// registries are used anonymously.
	// +optional
	Credentials *SecretRef `json:"credentials,omitempty"`
	// CABundle is a PEM bundle of the CAs to trust (default: the system's).
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle string `json:"caBundle,omitempty"`
	// Insecure talks plain HTTP to the registries listed in
	// InsecureRegistries (host[:port]); nothing else.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	InsecureRegistries []string `json:"insecureRegistries,omitempty"`
	// Repositories are the only repositories referrers are pushed to. The
	// sink pushes with its own credential, not the workload's: without this
	// boundary any tenant could attach documents to another team's images
	// by running them. Empty (the default): none; an image outside gets no
	// referrer and the AIBOM says so (SinkFailed, reason
	// RepositoryNotAllowed).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Repositories []OCIRepository `json:"repositories,omitempty"`
}

// OCIRepository allows referrers in the repositories under a prefix,
// optionally only for the workloads of some namespaces.
type OCIRepository struct {
	// Prefix is "registry[:port]/path" as the images are normalised
	// (docker.io/library/nginx): it matches that repository and those below
	// it at a "/" ("r.example/team-a" matches "r.example/team-a/model",
	// never "r.example/team-ab").
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.contains('/')",message="a repository prefix is registry/path"
	Prefix string `json:"prefix"`
	// Namespaces limits the grant to workloads of these namespaces; empty:
	// every namespace.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	Namespaces []string `json:"namespaces,omitempty"`
}

// Sink is one destination of the documents: exactly one of webhook,
// dependencyTrack and oci.
// +kubebuilder:validation:XValidation:rule="[has(self.webhook), has(self.dependencyTrack), has(self.oci)].filter(x, x).size() == 1",message="a sink sets exactly one of webhook, dependencyTrack, oci"
type Sink struct {
	// Name identifies the sink in conditions, metrics and AIBOM statuses.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Webhook posts CloudEvents over HTTPS.
	// +optional
	Webhook *WebhookSink `json:"webhook,omitempty"`
	// DependencyTrack uploads to a Dependency-Track server.
	// +optional
	DependencyTrack *DependencyTrackSink `json:"dependencyTrack,omitempty"`
	// OCI attaches referrers in OCI registries.
	// +optional
	OCI *OCISink `json:"oci,omitempty"`
}

// AIBOMConfigSpec is the controller's configuration; every field left out
// keeps the controller's flag (docs/sinks.md, README).
type AIBOMConfigSpec struct {
	// NamespaceSelector selects the namespaces whose workloads get AIBOMs
	// (default: the label aibom.dev/enabled=true). An empty selector ({})
	// selects every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// Adapters lists the enabled adapters by name, among those the
	// controller has loaded (--adapters, plugins); empty or absent: all.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=63
	Adapters []string `json:"adapters,omitempty"`
	// MaxInlineDocumentBytes is the inline cap of status.document (8192 to
	// 1048576; default --max-document-bytes). A larger document is reduced,
	// or, once a sink holds it, replaced by a reference. 8192 is the
	// smallest cap every workload's document fits.
	// +optional
	// +kubebuilder:validation:Minimum=8192
	// +kubebuilder:validation:Maximum=1048576
	MaxInlineDocumentBytes *int32 `json:"maxInlineDocumentBytes,omitempty"`
	// Sinks receive every document written and, where they have a notion
	// of it, every delete.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Sinks []Sink `json:"sinks,omitempty"`
	// AllowedDestinations lists address prefixes (CIDR, e.g. 127.0.0.1/32)
	// the sinks may connect to although they are refused by default:
	// loopback, link-local (cloud metadata endpoints), unspecified and
	// multicast addresses, and the cluster's API server. The check is on the
	// resolved address of every connection, so a name resolving to a refused
	// address is refused too. Allow only what a sink really runs on.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=64
	AllowedDestinations []string `json:"allowedDestinations,omitempty"`
}

// AIBOMConfigStatus says which configuration runs.
type AIBOMConfigStatus struct {
	// ObservedGeneration is the generation the controller last evaluated.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// AppliedGeneration is the generation that runs: ObservedGeneration when
	// Ready, an older one (or 0: the flags) while a change is refused.
	// +optional
	AppliedGeneration int64 `json:"appliedGeneration,omitempty"`
	// Conditions: Ready, and one "Sink-<name>" per sink.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AIBOMConfig configures the aibom controller while it runs: which
// namespaces and adapters, the inline cap, and the sinks the documents are
// delivered to. One object, named "default"; without it the controller runs
// on its flags.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=aibom-all
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'default'",message="the AIBOMConfig must be named default"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Applied",type=integer,JSONPath=`.status.appliedGeneration`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AIBOMConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the configuration.
	Spec AIBOMConfigSpec `json:"spec,omitempty"`
	// Status says whether it runs.
	Status AIBOMConfigStatus `json:"status,omitempty"`
}

// AIBOMConfigList is a list of AIBOMConfigs.
// +kubebuilder:object:root=true
type AIBOMConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AIBOMConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AIBOMConfig{}, &AIBOMConfigList{})
}
