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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
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
	// A Job controls its pods; a CronJob runs pods only through its Jobs.
	{Group: "batch", Kind: "Job", Resource: "jobs", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "batch", Kind: "Job"}}},
	{Group: "batch", Kind: "CronJob", Resource: "cronjobs", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "batch", Kind: "Job"}}},
}

type batchAdapter struct{}

// New returns the batch adapter.
func New() adapter.Adapter { return batchAdapter{} }

func (batchAdapter) Name() string { return Name }

func (batchAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

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
	spec, err := fields.Object(obj.Object, "spec", "")
	if err != nil {
		return fail(err)
	}
	jobSpec, jobPath := spec, "spec"
	var props []adapter.Property
	if gvk.Kind == "CronJob" {
		if s, ok := spec["schedule"].(string); ok && s != "" {
			props = append(props, adapter.Property{Name: PropertySchedule, Value: s})
		}
		jobTemplate, err := fields.Object(spec, "jobTemplate", "spec")
		if err != nil {
			return fail(err)
		}
		if jobSpec, err = fields.Object(jobTemplate, "spec", "spec.jobTemplate"); err != nil {
			return fail(err)
		}
		jobPath = "spec.jobTemplate.spec"
	} else {
		for _, p := range []struct{ field, name string }{
			{"parallelism", PropertyParallelism},
			{"completions", PropertyCompletions},
		} {
			if n, ok := fields.Integer(spec[p.field]); ok {
				props = append(props, adapter.Property{Name: p.name, Value: strconv.FormatInt(n, 10)})
			}
		}
	}
	template, err := fields.Object(jobSpec, "template", jobPath)
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
