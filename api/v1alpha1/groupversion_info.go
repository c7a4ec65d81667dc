// Package v1alpha1 holds the AIBOM custom resource: one AI Bill of Materials
// per reported workload, in the workload's namespace.
// +kubebuilder:object:generate=true
// +groupName=aibom.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the AIBOM resource.
	GroupVersion = schema.GroupVersion{Group: "aibom.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this group-version.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
