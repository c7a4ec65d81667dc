package graph

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// OptInLabel is the namespace label that opts a namespace in.
const OptInLabel = "aibom.dev/enabled"

// DefaultNamespaceSelector selects the namespaces labelled
// aibom.dev/enabled=true.
func DefaultNamespaceSelector() labels.Selector {
	req, err := labels.NewRequirement(OptInLabel, selection.Equals, []string{"true"})
	if err != nil {
		panic(err) // a constant requirement
	}
	return labels.NewSelector().Add(*req)
}
