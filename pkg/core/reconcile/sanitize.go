package reconcile

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// gitRevision is a commit hash as a model's revision (SHA-1 or SHA-256).
var gitRevision = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// CoreNamespace is the property prefix the core writes: an adapter's
// property under it would be mixed with (or forge) the core's own.
const CoreNamespace = "aibom."

var propertiesRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "aibom_adapter_properties_refused_total",
	Help: "Properties an adapter returned under the core's aibom. namespace; they are left out of the document.",
}, []string{"adapter"})

// refusedLogged remembers the adapters whose refused properties were
// logged: once per adapter and process, not once per reconcile.
var refusedLogged sync.Map

// sanitize makes an adapter's findings safe to write, whatever the adapter
// (in tree or a plugin) returned: properties under the core's namespace are
// refused (counted, logged once per adapter), and every string that reaches
// the document is redacted again (podtemplate.Redact), each redaction
// recorded at its field's locator. A container with both an image and
// ImageFromPods keeps the image and loses the flag.
func sanitize(ctx context.Context, adapterName string, f *adapter.Findings) {
	kept := f.Properties[:0]
	refused := 0
	for _, p := range f.Properties {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(p.Name)), CoreNamespace) {
			refused++
			continue
		}
		// The name is redacted before it is used in a locator.
		p.Name = podtemplate.RedactInto(p.Name, "properties", f)
		p.Value = podtemplate.RedactInto(p.Value, "properties["+p.Name+"]", f)
		kept = append(kept, p)
	}
	f.Properties = kept
	if refused > 0 {
		propertiesRefused.WithLabelValues(adapterName).Add(float64(refused))
		if _, seen := refusedLogged.LoadOrStore(adapterName, true); !seen {
			log.FromContext(ctx).Info("adapter returned properties under the core's namespace; they are left out of the document (logged once)",
				"adapter", adapterName, "prefix", CoreNamespace, "refused", refused)
		}
	}

	redact := func(s *string, ev *adapter.Evidence) {
		ev.Locator = podtemplate.RedactInto(ev.Locator, "locator", f)
		*s = podtemplate.RedactInto(*s, ev.Locator, f)
	}
	for i := range f.Containers {
		c := &f.Containers[i]
		if c.Image != "" {
			// An image written in the spec is what runs: a container that
			// also says ImageFromPods (adapter.Container.Validate refuses
			// it) is read as if it did not.
			c.ImageFromPods = false
		}
		redact(&c.Image, &c.Evidence)
		c.Name = podtemplate.RedactInto(c.Name, c.Evidence.Locator, f)
		c.Group = podtemplate.RedactInto(c.Group, c.Evidence.Locator, f)
	}
	for i := range f.Runtimes {
		r := &f.Runtimes[i]
		redact(&r.Name, &r.Evidence)
		r.Version = podtemplate.RedactInto(r.Version, r.Evidence.Locator, f)
	}
	for i := range f.Models {
		m := &f.Models[i]
		redact(&m.Name, &m.Evidence)
		if !gitRevision.MatchString(m.Version) {
			// A model revision is a commit hash (40 or 64 lower-case hex
			// digits): what the field is for, and not a secret's shape
			// anywhere else; anything else is redacted as usual.
			m.Version = podtemplate.RedactInto(m.Version, m.Evidence.Locator, f)
		}
		m.Source = podtemplate.RedactInto(m.Source, m.Evidence.Locator, f)
		m.ServedName = podtemplate.RedactInto(m.ServedName, m.Evidence.Locator, f)
		m.Task = podtemplate.RedactInto(m.Task, m.Evidence.Locator, f)
		m.Architecture = podtemplate.RedactInto(m.Architecture, m.Evidence.Locator, f)
		m.Quantization = podtemplate.RedactInto(m.Quantization, m.Evidence.Locator, f)
		m.BaseModel = podtemplate.RedactInto(m.BaseModel, m.Evidence.Locator, f)
	}
	for i := range f.Data {
		redact(&f.Data[i].Name, &f.Data[i].Evidence)
	}
	for i := range f.Frameworks {
		redact(&f.Frameworks[i].Name, &f.Frameworks[i].Evidence)
	}
	for i := range f.Accelerators {
		redact(&f.Accelerators[i].Resource, &f.Accelerators[i].Evidence)
	}
	for i := range f.Scrapers {
		s := &f.Scrapers[i]
		s.Name = podtemplate.RedactInto(s.Name, "scrapers", f)
		s.Version = podtemplate.RedactInto(s.Version, "scrapers", f)
		s.Method = podtemplate.RedactInto(s.Method, "scrapers", f)
	}
	for i := range f.Redactions {
		f.Redactions[i].Locator, _ = podtemplate.Redact(f.Redactions[i].Locator)
	}
}
