package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons used on an AIBOMAdapterProfile.
const (
	// ConditionAccepted is True when the profile compiled and its adapter is
	// registered; False names what is wrong with it (reason, message).
	ConditionAccepted = "Accepted"

	ReasonProfileLoaded   = "Loaded"
	ReasonProfileInvalid  = "Invalid"
	ReasonProfileClaimed  = "KindClaimed"
	ReasonProfileDisabled = "Disabled"
)

// AdapterProfileSpec is a declarative adapter: the kinds of one operator
// with their roles, and for each tracked or referenced kind the rules that
// map its fields to findings. It is data only: paths are evaluated by the
// controller with bounded cost, and nothing in it is executed.
type AdapterProfileSpec struct {
	// Adapter is the adapter's name, as the --adapters flag selects it;
	// the object's name when empty.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Adapter string `json:"adapter,omitempty"`
	// Version is the profile's version, recorded as its scraper's version on
	// every document it contributes to.
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version"`
	// Description says which operator the profile covers.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`
	// Kinds are the operator's kinds.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Kinds []ProfileKind `json:"kinds"`
}

// GroupKindRef names a kind by group and kind.
type GroupKindRef struct {
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
}

// ProfileKind declares one kind of the operator and, for a tracked or a
// referenced kind, how to read it.
type ProfileKind struct {
	// Group is the API group.
	Group string `json:"group"`
	// Kind is the kind, e.g. "Workspace".
	Kind string `json:"kind"`
	// Resource is the plural resource name, e.g. "workspaces".
	Resource string `json:"resource"`
	// Versions lists the versions the rules fit, preferred first.
	// +kubebuilder:validation:MinItems=1
	Versions []string `json:"versions"`
	// Role is tracked, walk-only or referenced.
	// +kubebuilder:validation:Enum=tracked;walk-only;referenced
	Role string `json:"role"`
	// ClusterScoped marks a cluster-scoped referenced kind.
	// +optional
	ClusterScoped bool `json:"clusterScoped,omitempty"`
	// PodOwners lists, for a tracked kind, the kinds that control its pods
	// when no other tracked kind lies between (see the adapter contract).
	// +optional
	PodOwners []GroupKindRef `json:"podOwners,omitempty"`
	// Rules say how to read an object of a tracked or referenced kind.
	// +optional
	Rules *ProfileRules `json:"rules,omitempty"`
}

// ProfileRules map the fields of an object to findings. Every path is a
// field path from the object's root ("spec.template", "inference.preset"):
// field names separated by dots, "[*]" for every element of a list, "[N]"
// for one element, "*" for every value of a map (in key order).
type ProfileRules struct {
	// PodTemplates are pod templates, pod specs or containers to read with
	// the shared pod-template scraper.
	// +optional
	PodTemplates []TemplateRule `json:"podTemplates,omitempty"`
	// Containers are containers the operator creates with an image it
	// chooses itself (none in the spec): the core reads their image and
	// running digest from the pods attributed to the root, by name.
	// +optional
	Containers []ContainerRule `json:"containers,omitempty"`
	// Commands are string fields holding a command line (a job's
	// entrypoint), read as a container's command line is.
	// +optional
	Commands []FieldRule `json:"commands,omitempty"`
	// Models are model claims.
	// +optional
	Models []FieldRule `json:"models,omitempty"`
	// Runtimes are serving runtime claims: a field's value, or a constant
	// the operator implies.
	// +optional
	Runtimes []FieldRule `json:"runtimes,omitempty"`
	// Data is model storage (a cache, a volume, a PVC).
	// +optional
	Data []FieldRule `json:"data,omitempty"`
	// Frameworks are training and evaluation framework claims: a field's
	// value, or a constant the kind implies (a JAXJob runs JAX). A rule's
	// Name is the purpose: "training" (the default) or "evaluation".
	// +optional
	Frameworks []FieldRule `json:"frameworks,omitempty"`
	// Properties are kind-specific facts recorded on the document, named
	// "<adapter>.<name>".
	// +optional
	Properties []FieldRule `json:"properties,omitempty"`
	// References are fields naming an object of a referenced kind of this
	// profile; the referenced object is read with its kind's rules.
	// +optional
	References []ReferenceRule `json:"references,omitempty"`
}

// Condition keeps a node when a field (Field: a path from the node, or
// from the object's root when it starts with "$.") holds one of In
// (case-insensitive), none of NotIn, or, with neither, is present (absent
// with Absent).
type Condition struct {
	Field string `json:"field"`
	// +optional
	In []string `json:"in,omitempty"`
	// +optional
	NotIn []string `json:"notIn,omitempty"`
	// +optional
	Absent bool `json:"absent,omitempty"`
}

// Selection selects the nodes a rule reads.
type Selection struct {
	// Path selects nodes from the object's root.
	Path string `json:"path"`
	// Recurse names a list field of a node that holds nodes of the same
	// shape (an inference graph's "children"): the rule also reads every
	// descendant, to a bounded depth.
	// +optional
	Recurse string `json:"recurse,omitempty"`
	// Where keeps the nodes that meet every condition.
	// +optional
	Where []Condition `json:"where,omitempty"`
}

// TemplateRule hands pod templates to the shared pod-template scraper.
type TemplateRule struct {
	Selection `json:",inline"`
	// Shape is what the path selects: "template" (a PodTemplateSpec, the
	// default), "podSpec" or "container".
	// +optional
	// +kubebuilder:validation:Enum=template;podSpec;container
	Shape string `json:"shape,omitempty"`
	// Group names the part of the workload the containers belong to.
	// +optional
	Group string `json:"group,omitempty"`
	// GroupByWildcard names the group after the last wildcard of the path:
	// a map key, or the "name" field of a list element (else its index).
	// +optional
	GroupByWildcard bool `json:"groupByWildcard,omitempty"`
}

// ContainerRule declares a container the operator creates for each selected
// node (the node is its evidence), named Name in the pods.
type ContainerRule struct {
	Selection `json:",inline"`
	// Name is the container's name in the operator's pods.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Group names the part of the workload the container belongs to.
	// +optional
	Group string `json:"group,omitempty"`
}

// FieldRule turns the value of a field, or a constant, into a finding.
type FieldRule struct {
	Selection `json:",inline"`
	// Field is a path from each selected node to the value; empty means
	// the node is the value. A list of strings gives one value per element.
	// +optional
	Field string `json:"field,omitempty"`
	// Value is a constant used instead of a field: a runtime, a data
	// location or a framework the operator implies whenever the selected
	// node exists. Reason is required with it.
	// +optional
	Value string `json:"value,omitempty"`
	// Reason says why the operator implies Value; it is recorded on the
	// document.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Map renames values (keys compared case-insensitively). With a map, a
	// value it does not name is skipped, unless KeepUnmapped.
	// +optional
	Map map[string]string `json:"map,omitempty"`
	// KeepUnmapped keeps a value the map does not name, lower-cased.
	// +optional
	KeepUnmapped bool `json:"keepUnmapped,omitempty"`
	// Prefix is a path from the node to a value put before the value,
	// joined by Separator ("/" when empty).
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// +optional
	Separator string `json:"separator,omitempty"`
	// Location is a path from the node to where a model's weights are read
	// from (its storage URI); recorded as the model's source.
	// +optional
	Location string `json:"location,omitempty"`
	// ServedName is a path from the node to the name a model is served as.
	// +optional
	ServedName string `json:"servedName,omitempty"`
	// Version is a path from the node to the runtime's or model's version.
	// +optional
	Version string `json:"version,omitempty"`
	// Task, Architecture and Quantization are paths from the node to what
	// the model is served for, its architecture and its quantisation (the
	// model card and the aibom.model.quantization property).
	// +optional
	Task string `json:"task,omitempty"`
	// +optional
	Architecture string `json:"architecture,omitempty"`
	// +optional
	Quantization string `json:"quantization,omitempty"`
	// BaseModel is a path to the base model a LoRA adapter applies to:
	// from the node, or from the object's root when it starts with "$.".
	// +optional
	BaseModel string `json:"baseModel,omitempty"`
	// Name is a property's name (after "<adapter>."), a data kind, or a
	// framework's purpose ("training", "evaluation").
	// +optional
	Name string `json:"name,omitempty"`
	// Confidence is declared or inferred: declared by default for a field,
	// inferred for a constant.
	// +optional
	// +kubebuilder:validation:Enum=declared;inferred
	Confidence string `json:"confidence,omitempty"`
	// Platform marks a runtime claim as a serving platform.
	// +optional
	Platform bool `json:"platform,omitempty"`
}

// ReferenceRule reads a field naming an object of a referenced kind.
type ReferenceRule struct {
	Selection `json:",inline"`
	// Field is a path from each selected node to the referenced name.
	// +optional
	Field string `json:"field,omitempty"`
	// Group and Kind name a referenced kind of this profile. Fallback names
	// a second kind tried when no object of the first is found (a
	// namespaced runtime, then the cluster-scoped one).
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// +optional
	Fallback *GroupKindRef `json:"fallback,omitempty"`
	// Unresolved says what the reference claims when the object cannot be
	// read: "model" or "runtime" (a claim named after the reference, with
	// confidence unresolved), or nothing ("", the default) beyond the
	// property that records the failed lookup.
	// +optional
	// +kubebuilder:validation:Enum=model;runtime
	Unresolved string `json:"unresolved,omitempty"`
}

// AdapterProfileStatus says whether the profile is in use.
type AdapterProfileStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Accepted.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AIBOMAdapterProfile is a declarative adapter loaded by the controller
// without a restart.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=aibomprofile,categories=aibom
// +kubebuilder:printcolumn:name="Adapter",type=string,JSONPath=`.spec.adapter`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AIBOMAdapterProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AdapterProfileSpec   `json:"spec"`
	Status AdapterProfileStatus `json:"status,omitempty"`
}

// AIBOMAdapterProfileList is a list of AIBOMAdapterProfile.
// +kubebuilder:object:root=true
type AIBOMAdapterProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AIBOMAdapterProfile `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AIBOMAdapterProfile{}, &AIBOMAdapterProfileList{})
}
