//go:build tools

// Package tools pins the operator this module builds for the qualification
// suite (test/operators): its own module, so that the operator's
// dependencies never meet ours.
package tools

import _ "sigs.k8s.io/jobset"
