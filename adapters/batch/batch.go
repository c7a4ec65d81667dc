// Package batch is the adapter for the built-in batch/v1 workloads: Job and
// CronJob, both tracked (a CronJob's Jobs are absorbed by their CronJob).
//
// Scrape reads a Job's spec.template, and a CronJob's
// spec.jobTemplate.spec.template, with the podtemplate scraper, passing the
// object's annotations as workload annotations. It records a Job's
// spec.parallelism and spec.completions, and a CronJob's spec.schedule, as
// properties when they are set.
package batch

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Name is the adapter's name, as used by the --adapters flag.
const Name = "batch"

// Properties recorded by Scrape.
const (
	// PropertyParallelism holds a Job's spec.parallelism.
	PropertyParallelism = "k8s.parallelism"
	// PropertyCompletions holds a Job's spec.completions.
	PropertyCompletions = "k8s.completions"
	// PropertySchedule holds a CronJob's spec.schedule.
	PropertySchedule = "k8s.schedule"
)

var kinds = []adapter.Kind{
	{Group: "batch", Kind: "Job", Resource: "jobs", Versions: []string{"v1"}, Role: adapter.RoleTracked},
	{Group: "batch", Kind: "CronJob", Resource: "cronjobs", Versions: []string{"v1"}, Role: adapter.RoleTracked},
}

type batchAdapter struct{}

// New returns the batch adapter.
func New() adapter.Adapter { return batchAdapter{} }

func (batchAdapter) Name() string { return Name }

func (batchAdapter) Kinds() []adapter.Kind {
	out := make([]adapter.Kind, len(kinds))
	for i, k := range kinds {
		k.Versions = append([]string(nil), k.Versions...)
		out[i] = k
	}
	return out
}

func (batchAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("batch: no object")
	}
	gvk := obj.GroupVersionKind()
	if gvk.Group != "batch" || gvk.Version != "v1" || (gvk.Kind != "Job" && gvk.Kind != "CronJob") {
		return adapter.Findings{}, fmt.Errorf("batch: %s is not a tracked kind of this adapter", gvk)
	}
	fail := func(err error) (adapter.Findings, error) {
		return adapter.Findings{}, fmt.Errorf("batch: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	spec, err := mapAt(obj.Object, "spec", "")
	if err != nil {
		return fail(err)
	}
	jobSpec, jobPath := spec, "spec"
	var props []adapter.Property
	if gvk.Kind == "CronJob" {
		if s, ok := spec["schedule"].(string); ok && s != "" {
			props = append(props, adapter.Property{Name: PropertySchedule, Value: s})
		}
		jobTemplate, err := mapAt(spec, "jobTemplate", "spec")
		if err != nil {
			return fail(err)
		}
		if jobSpec, err = mapAt(jobTemplate, "spec", "spec.jobTemplate"); err != nil {
			return fail(err)
		}
		jobPath = "spec.jobTemplate.spec"
	} else {
		for _, p := range []struct{ field, name string }{
			{"parallelism", PropertyParallelism},
			{"completions", PropertyCompletions},
		} {
			if n, ok := integer(spec[p.field]); ok {
				props = append(props, adapter.Property{Name: p.name, Value: strconv.FormatInt(n, 10)})
			}
		}
	}
	template, err := mapAt(jobSpec, "template", jobPath)
	if err != nil {
		return fail(err)
	}
	f, err := podtemplate.ScrapeTemplate(template, jobPath+".template", podtemplate.Options{WorkloadAnnotations: obj.GetAnnotations()})
	if err != nil {
		return fail(err)
	}
	f.Properties = append(f.Properties, props...)
	return f, nil
}

// mapAt returns m[key] as an object; absent or null is nil. path is m's
// locator, for errors.
func mapAt(m map[string]any, key, path string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	out, ok := v.(map[string]any)
	if !ok {
		if path != "" {
			key = path + "." + key
		}
		return nil, fmt.Errorf("%s: expected object, got %T", key, v)
	}
	return out, nil
}

// integer reads a JSON number that holds an integer.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}
