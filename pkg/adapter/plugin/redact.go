package plugin

import (
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// maxAdapterErrorBytes caps the adapter error a plugin returns: it becomes
// a condition's message and an Event.
const maxAdapterErrorBytes = 4096

// redactFindings passes what a plugin returned through the same redaction
// in-tree adapters apply (podtemplate.RedactInto) before the host hands it
// to the core: a plugin built without it, or against an older
// podtemplate, cannot put a secret into a document. The free-text fields
// in-tree adapters redact are redacted here (model names, sources and
// served names, data names, property values, accelerator resources), and
// every evidence locator, so that a masked value's path does not carry it
// either. Each masking is recorded as a Redaction at the field's locator.
func redactFindings(f *adapter.Findings) {
	loc := func(e *adapter.Evidence) string {
		e.Locator, _ = podtemplate.Redact(e.Locator)
		return e.Locator
	}
	for i := range f.Containers {
		loc(&f.Containers[i].Evidence)
	}
	for i := range f.Runtimes {
		loc(&f.Runtimes[i].Evidence)
	}
	for i := range f.Frameworks {
		loc(&f.Frameworks[i].Evidence)
	}
	for i := range f.Models {
		m := &f.Models[i]
		l := loc(&m.Evidence)
		m.Name = podtemplate.RedactInto(m.Name, l, f)
		m.Source = podtemplate.RedactInto(m.Source, l, f)
		m.ServedName = podtemplate.RedactInto(m.ServedName, l, f)
	}
	for i := range f.Data {
		d := &f.Data[i]
		d.Name = podtemplate.RedactInto(d.Name, loc(&d.Evidence), f)
	}
	for i := range f.Accelerators {
		a := &f.Accelerators[i]
		a.Resource = podtemplate.RedactInto(a.Resource, loc(&a.Evidence), f)
	}
	for i := range f.Properties {
		p := &f.Properties[i]
		p.Name, _ = podtemplate.Redact(p.Name)
		p.Value = podtemplate.RedactInto(p.Value, p.Name, f)
	}
	for i := range f.Redactions {
		f.Redactions[i].Locator, _ = podtemplate.Redact(f.Redactions[i].Locator)
	}
}

// adapterError is the error message a plugin's adapter returned, redacted,
// without control characters, and cut to maxAdapterErrorBytes.
func adapterError(msg string) string {
	return sanitizeStderr(msg, maxAdapterErrorBytes, 0)
}
