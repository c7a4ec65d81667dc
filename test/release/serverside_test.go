package release

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyObjects server-side applies objects as the chart's field manager;
// with dryRun the API server validates and defaults each one against its
// schema (built-in kinds and the CRD alike) and admits it, but stores
// nothing.
func applyObjects(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool) error {
	for _, o := range objs {
		o = o.DeepCopy()
		opts := []client.PatchOption{client.ForceOwnership, client.FieldOwner("helm"), client.FieldValidation("Strict")}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		if err := env.Client.Patch(ctx, o, client.Apply, opts...); err != nil { //nolint:staticcheck // unstructured objects: no apply configuration
			return &applyError{o, err}
		}
	}
	return nil
}

type applyError struct {
	obj *unstructured.Unstructured
	err error
}

func (e *applyError) Error() string {
	return "apply " + identity(e.obj) + ": " + e.err.Error()
}

// TestChartObjectsValidOnAPIServer: every object the chart renders, with
// default and non-default values, is valid for a real API server (strict
// field validation: an unknown or misspelt field fails). The ServiceMonitor
// is the Prometheus Operator's kind, not served here; its fields are checked
// by TestChartNonDefaultValues.
func TestChartObjectsValidOnAPIServer(t *testing.T) {
	for name, values := range map[string]string{"defaults": "", "non-default": nonDefaultValues} {
		t.Run(name, func(t *testing.T) {
			r := render(t, values)
			var objs []*unstructured.Unstructured
			for _, o := range append(r.CRDs, r.Objects...) {
				if o.GetKind() == "ServiceMonitor" {
					continue
				}
				objs = append(objs, o)
			}
			require.NoError(t, applyObjects(context.Background(), objs, true))
		})
	}
}

// TestServerSideCheckIsNotVacuous: the check above does fail on a field the
// schema does not know.
func TestServerSideCheckIsNotVacuous(t *testing.T) {
	r := render(t, "")
	d := r.find("Deployment", "aibom-controller").DeepCopy()
	require.NoError(t, unstructured.SetNestedField(d.Object, true, "spec", "template", "spec", "runAsRoot"))
	err := applyObjects(context.Background(), []*unstructured.Unstructured{d}, true)
	require.ErrorContains(t, err, "runAsRoot")
}
