package podtemplate

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
)

// Scraper identity recorded in adapter.Findings.Scrapers.
const (
	// ScraperName names this scraper.
	ScraperName = "podtemplate"
	// ScraperVersion changes whenever a heuristic changes what is found.
	ScraperVersion = "0.3.0"
	// ScraperMethod says how it reads: from a pod template.
	ScraperMethod = "pod-template"
)

// Scraper returns the entry ScrapeTemplate and ScrapePodSpec put in
// adapter.Findings.Scrapers.
func Scraper() adapter.Scraper {
	return adapter.Scraper{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}
}

// Options tunes ScrapeTemplate and ScrapePodSpec.
type Options struct {
	// WorkloadAnnotations are the annotations of the object that holds the
	// template. Those with ModelAnnotationPrefix become declared models
	// located at "metadata.annotations[<key>]".
	WorkloadAnnotations map[string]string
	// Group is copied to every adapter.Container.Group (a Dynamo component, an
	// LWS role); empty for plain workloads.
	Group string
	// VolumeClaimTemplates names the volume claim templates of the object (a
	// StatefulSet's spec.volumeClaimTemplates[*].metadata.name). A mount of
	// one of them at a model path is reported as a "pvc".
	VolumeClaimTemplates []string
}

// ContainerOptions tunes ScrapeContainer.
type ContainerOptions struct {
	// Group is copied to adapter.Container.Group.
	Group string
	// Init marks an init container.
	Init bool
	// Volumes is the pod's unstructured volume list, used to name the storage
	// behind a mount at a model path. It may be nil: the mount is then
	// reported with kind "volume".
	Volumes []any
	// VolumesPath is the locator of Volumes, used in errors
	// ("spec.template.spec.volumes").
	VolumesPath string
	// VolumeClaimTemplates is as in Options.
	VolumeClaimTemplates []string
}

// MergeFindings appends src to dst like adapter.Findings.Merge, but keeps one
// entry per scraper in dst.Scrapers. Use it to combine several templates of
// one object.
func MergeFindings(dst *adapter.Findings, src adapter.Findings) {
	scrapers := src.Scrapers
	src.Scrapers = nil
	dst.Merge(src)
	for _, s := range scrapers {
		if !containsScraper(dst.Scrapers, s) {
			dst.Scrapers = append(dst.Scrapers, s)
		}
	}
}

func containsScraper(list []adapter.Scraper, s adapter.Scraper) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ScrapeTemplate reads an unstructured PodTemplateSpec (keys "metadata" and
// "spec") found at path in its object, e.g. "spec.template" or
// "spec.jobTemplate.spec.template", and returns its findings: workload
// annotation models first, then pod template annotation models, then init
// containers and containers in spec order. Findings.Scrapers holds
// Scraper(). A nil or empty template, or one without containers, is not an
// error. A field read by the heuristics that has the wrong type is an error
// naming its locator; no partial findings are returned then.
func ScrapeTemplate(template map[string]any, path string, opts Options) (adapter.Findings, error) {
	f := newFindings(opts)
	meta, err := fields.Object(template, "metadata", path)
	if err != nil {
		return adapter.Findings{}, err
	}
	ann, err := ModelAnnotations(meta, path+".metadata")
	if err != nil {
		return adapter.Findings{}, err
	}
	models, reds := ModelsFromAnnotations(ann, path+".metadata.annotations", adapter.SourcePodTemplateAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)
	f.Runtimes = append(f.Runtimes, runtimesFromLabels(meta, path+".metadata")...)
	f.Frameworks = append(f.Frameworks, frameworksFromLabels(meta, path+".metadata")...)
	spec, err := fields.Object(template, "spec", path)
	if err != nil {
		return adapter.Findings{}, err
	}
	if err := scrapeSpec(spec, path+".spec", opts, &f); err != nil {
		return adapter.Findings{}, err
	}
	JoinServedNames(f.Models)
	return f, nil
}

// ScrapePodSpec reads a bare unstructured PodSpec found at path in its
// object (e.g. "spec.podSpec"); it is ScrapeTemplate without the template's
// metadata. Container locators are "<path>.containers[i]".
func ScrapePodSpec(podSpec map[string]any, path string, opts Options) (adapter.Findings, error) {
	f := newFindings(opts)
	if err := scrapeSpec(podSpec, path, opts, &f); err != nil {
		return adapter.Findings{}, err
	}
	JoinServedNames(f.Models)
	return f, nil
}

// ScrapeContainer reads one unstructured container (a corev1.Container)
// found at path (e.g. "spec.template.spec.containers[0]"): the container
// itself, its runtime, the models in its command, args and env, and the
// model storage it mounts. It returns no Scrapers entry. A nil container or
// a wrong type in a field it reads is an error naming the locator.
func ScrapeContainer(c map[string]any, path string, opts ContainerOptions) (adapter.Findings, error) {
	var f adapter.Findings
	ps := podScraper{
		group:       opts.Group,
		volumes:     opts.Volumes,
		volumesPath: opts.VolumesPath,
		claims:      opts.VolumeClaimTemplates,
	}
	if ps.volumesPath == "" {
		ps.volumesPath = "volumes"
	}
	if c == nil {
		return f, fmt.Errorf("%s: expected object, got null", path)
	}
	if err := ps.container(c, path, opts.Init, &f); err != nil {
		return adapter.Findings{}, err
	}
	return f, nil
}

func newFindings(opts Options) adapter.Findings {
	f := adapter.Findings{Scrapers: []adapter.Scraper{Scraper()}}
	models, reds := ModelsFromAnnotations(opts.WorkloadAnnotations, "metadata.annotations", adapter.SourceWorkloadAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)
	return f
}

// podScraper holds what the containers of one pod share.
type podScraper struct {
	group       string
	volumes     any
	volumesPath string
	claims      []string
}

func scrapeSpec(spec map[string]any, specPath string, opts Options, f *adapter.Findings) error {
	ps := podScraper{group: opts.Group, volumes: spec["volumes"], volumesPath: specPath + ".volumes", claims: opts.VolumeClaimTemplates}
	if claims, ok := spec["resourceClaims"].([]any); ok {
		for i, raw := range claims {
			name := ""
			if m, ok := raw.(map[string]any); ok {
				name, _ = m["name"].(string)
			}
			f.Accelerators = append(f.Accelerators, adapter.Accelerator{Resource: "resourceclaim:" + RedactInto(name, specPath, f),
				Evidence: adapter.Evidence{Source: adapter.SourceResourceRequest, Locator: fmt.Sprintf("%s.resourceClaims[%d]", specPath, i)}})
		}
	}
	for _, field := range []string{"initContainers", "containers"} {
		list, err := fields.List(spec, field, specPath)
		if err != nil {
			return err
		}
		for i, raw := range list {
			cpath := fmt.Sprintf("%s.%s[%d]", specPath, field, i)
			if err := ps.container(raw, cpath, field == "initContainers", f); err != nil {
				return err
			}
		}
	}
	return nil
}

// containerFields are the container fields the heuristics read; only they
// are decoded.
var containerFields = []string{"name", "image", "command", "args", "env", "volumeMounts", "restartPolicy"}

func (ps *podScraper) container(raw any, cpath string, init bool, f *adapter.Findings) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return fields.TypeError(cpath, "object", raw)
	}
	var c corev1.Container
	if err := decode(m, containerFields, cpath, &c); err != nil {
		return err
	}
	imageLoc := cpath + ".image"
	f.Containers = append(f.Containers, adapter.Container{
		Name: c.Name, Image: c.Image, Init: init, Group: ps.group,
		Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: imageLoc},
	})
	sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
	serving := !init || sidecar
	imageRuntime := ""
	var imageRuntimes []adapter.Runtime
	ir, irOK := ReadImage(c.Image)
	if irOK && serving {
		imageRuntime = ir.Name
		ev := adapter.Evidence{Source: adapter.SourceImagePattern, Locator: imageLoc}
		imageRuntimes = append(imageRuntimes, adapter.Runtime{Name: ir.Name, Version: ir.Version, Platform: ir.Platform, Confidence: adapter.Inferred, Evidence: ev})
		if ir.Engine != "" {
			imageRuntime = ir.Engine
			imageRuntimes = append(imageRuntimes, adapter.Runtime{Name: ir.Engine, Confidence: adapter.Inferred, Evidence: ev})
		}
	}
	if ir.Name == adapter.PlatformNIM {
		// A NIM image names its model whatever runs it (a download Job).
		if m, ok := nimImageModel(c.Image); ok {
			f.Models = append(f.Models, adapter.Model{Name: RedactInto(m, imageLoc, f), Confidence: adapter.Inferred,
				Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: imageLoc}})
		}
	}
	if fw, ok := FrameworkFromImage(c.Image); ok && serving {
		f.Frameworks = append(f.Frameworks, adapter.Framework{Name: fw.Name, Purpose: fw.Purpose, Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: imageLoc}})
	}

	// Env: secret-like names are never read; literal values of the others
	// expand $(VAR) references in args and shell variables in scripts.
	env := map[string]string{}
	var envFindings adapter.Findings
	envRuntime := map[string]bool{}
	envFramework := map[string]bool{}
	servedEnv := map[int]bool{} // indexes in envFindings.Models of served names
	for i, e := range c.Env {
		envName, _ := Redact(e.Name) // a locator must not carry a secret either
		loc := fmt.Sprintf("%s.env[%d](%s)", cpath, i, envName)
		if IsSecretName(e.Name) {
			if e.Value != "" {
				envFindings.Redactions = append(envFindings.Redactions, adapter.Redaction{Locator: loc, Reason: ReasonSecretName})
			}
			continue
		}
		if serving {
			if rt, ok := runtimeFromEnv(e.Name); ok && !envRuntime[rt] {
				envRuntime[rt] = true
				envFindings.Runtimes = append(envFindings.Runtimes, adapter.Runtime{Name: rt, Confidence: adapter.Inferred,
					Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc}})
			}
			if fw, ok := frameworkFromEnv(e.Name); ok && !envFramework[fw] {
				envFramework[fw] = true
				envFindings.Frameworks = append(envFindings.Frameworks, adapter.Framework{Name: fw, Purpose: adapter.PurposeTraining, Confidence: adapter.Inferred,
					Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc}})
			}
		}
		if e.ValueFrom != nil {
			continue
		}
		env[e.Name] = e.Value
		n := len(envFindings.Models)
		ModelFromEnv(e.Name, e.Value, loc, &envFindings)
		if strings.Contains(strings.ToUpper(e.Name), "SERVED") {
			for j := n; j < len(envFindings.Models); j++ {
				servedEnv[j] = true
			}
		}
	}

	cf, info := readCommand(CommandInput{Command: c.Command, Args: c.Args, Env: env, ContainerPath: cpath, ImageRuntime: imageRuntime})
	if !serving || info.download {
		// An init container prepares, and a download fills a cache: neither
		// serves, whatever its image.
		cf.Runtimes = nil
		imageRuntimes = nil
		envFindings.Runtimes = nil
	}
	if isDatasetContainer(c.Name, c.Image) {
		// A dataset initializer's STORAGE_URI is the data it fetches.
		for _, m := range envFindings.Models {
			name := m.Name
			if m.Source != "" {
				name = m.Source
			}
			envFindings.Data = append(envFindings.Data, adapter.Data{Name: DatasetName(name), Kind: DataKindDataset, Confidence: m.Confidence, Evidence: m.Evidence})
		}
		envFindings.Models = nil
		servedEnv = nil
	}
	envFindings.Models = attachServedNames(cf.Models, envFindings.Models, servedEnv)
	f.Runtimes = append(f.Runtimes, imageRuntimes...)
	f.Runtimes = append(f.Runtimes, cf.Runtimes...)
	f.Runtimes = append(f.Runtimes, envFindings.Runtimes...)
	f.Frameworks = append(f.Frameworks, cf.Frameworks...)
	f.Frameworks = append(f.Frameworks, envFindings.Frameworks...)
	f.Models = append(f.Models, cf.Models...)
	f.Models = append(f.Models, envFindings.Models...)
	f.Data = append(f.Data, cf.Data...)
	f.Data = append(f.Data, envFindings.Data...)
	f.Redactions = append(f.Redactions, cf.Redactions...)
	f.Redactions = append(f.Redactions, envFindings.Redactions...)
	f.Accelerators = append(f.Accelerators, accelerators(m["resources"], cpath)...)

	for i, vm := range c.VolumeMounts {
		if !IsModelPath(vm.MountPath) {
			continue
		}
		mountPath, _ := Redact(vm.MountPath) // a locator must not carry a secret either
		loc := fmt.Sprintf("%s.volumeMounts[%d](%s)", cpath, i, mountPath)
		kind, detail, err := ps.volume(vm.Name)
		if err != nil {
			return err
		}
		name := vm.Name
		if detail != "" {
			name += " (" + detail + ")"
		}
		f.Data = append(f.Data, adapter.Data{
			Name: RedactInto(name, loc, f), Kind: kind, Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc},
		})
	}
	return nil
}

// DatasetName is how a dataset named by value is listed: a Hugging Face
// dataset by its hub id, as a model is ("hf://tatsu-lab/alpaca" is
// "tatsu-lab/alpaca"); any other location whole (an s3:// or gs:// URI is
// its identity).
func DatasetName(value string) string {
	for _, scheme := range []string{"hf://", "huggingface://", "hf:"} {
		if rest, ok := strings.CutPrefix(value, scheme); ok && rest != "" {
			return strings.TrimRight(rest, "/")
		}
	}
	return value
}

// DataKindDataset is the adapter.Data kind of a dataset a job fetches or
// reads (a dataset initializer's STORAGE_URI).
const DataKindDataset = "dataset"

// isDatasetContainer reports whether a container fetches a dataset: its
// name, or the last segment of its image's repository, has "dataset" as a
// part ("dataset-initializer", "kubeflow/dataset-initializer").
func isDatasetContainer(name, image string) bool {
	repo, _, _ := ParseImage(image)
	last := strings.ToLower(lastSegment(repo))
	return hasPart(strings.ToLower(name), "dataset") || hasPart(last, "dataset")
}

// attachServedNames makes a served name an env var gives (models[i] with
// served[i]) the ServedName of the one model the container otherwise
// names (its command line or its other env vars), and renames the served
// name's claim to that model, keeping its evidence: a served name and its
// model are one component. With none, or several (which one is served is
// not said), the served name stays a model of its own.
func attachServedNames(cmd, models []adapter.Model, served map[int]bool) []adapter.Model {
	if len(served) == 0 {
		return models
	}
	var loaded []*adapter.Model
	for i := range cmd {
		if !strings.HasSuffix(cmd[i].Evidence.Locator, "(python)") {
			loaded = append(loaded, &cmd[i])
		}
	}
	for i := range models {
		if !served[i] {
			loaded = append(loaded, &models[i])
		}
	}
	if len(loaded) != 1 {
		return models
	}
	l := loaded[0]
	for i := range models {
		m := &models[i]
		if !served[i] || m.Name == l.Name {
			continue
		}
		if l.ServedName == "" {
			l.ServedName = m.Name
		}
		m.ServedName, m.Name, m.Version, m.Source = m.Name, l.Name, l.Version, l.Source
	}
	return models
}

// volumeFields are the volume fields decoded to name a volume's source.
// emptyDir and ephemeral are recognised by their key alone (they hold
// quantities and templates that are not needed).
var volumeFields = []string{"name", "persistentVolumeClaim", "hostPath", "configMap", "secret", "nfs", "image", "csi"}

// volume returns the kind of storage behind the pod volume called name, and
// a detail naming its source (a claim name, a host path, ...).
func (ps *podScraper) volume(name string) (kind, detail string, err error) {
	if ps.volumes != nil {
		list, ok := ps.volumes.([]any)
		if !ok {
			return "", "", fields.TypeError(ps.volumesPath, "list", ps.volumes)
		}
		for i, raw := range list {
			m, ok := raw.(map[string]any)
			if !ok {
				continue // not the volume we look for; others are not checked
			}
			if n, _ := m["name"].(string); n != name {
				continue
			}
			vpath := fmt.Sprintf("%s[%d]", ps.volumesPath, i)
			var v corev1.Volume
			if err := decode(m, volumeFields, vpath, &v); err != nil {
				return "", "", err
			}
			switch {
			case v.PersistentVolumeClaim != nil:
				return "pvc", v.PersistentVolumeClaim.ClaimName, nil
			case v.HostPath != nil:
				return "hostPath", v.HostPath.Path, nil
			case v.ConfigMap != nil:
				return "configMap", v.ConfigMap.Name, nil
			case v.Secret != nil:
				return "secret", v.Secret.SecretName, nil
			case v.NFS != nil:
				return "nfs", v.NFS.Server + ":" + v.NFS.Path, nil
			case v.Image != nil:
				return "image", v.Image.Reference, nil
			case v.CSI != nil:
				return "csi", v.CSI.Driver, nil
			case m["emptyDir"] != nil:
				return "emptyDir", "", nil
			case m["ephemeral"] != nil:
				return "ephemeral", "", nil
			}
			return "volume", "", nil
		}
	}
	if contains(ps.claims, name) {
		return "pvc", "volumeClaimTemplate", nil
	}
	return "volume", "", nil
}

// decode converts the given fields of m into out (a corev1 struct). On
// failure it finds the field, and the list element, at fault, so that the
// error names its locator.
func decode(m map[string]any, fields []string, path string, out any) error {
	pruned := make(map[string]any, len(fields))
	for _, k := range fields {
		if v, ok := m[k]; ok && v != nil {
			pruned[k] = v
		}
	}
	err := fromUnstructured(pruned, out)
	if err == nil {
		return nil
	}
	for _, k := range fields {
		v, ok := pruned[k]
		if !ok {
			continue
		}
		if e := fromUnstructured(map[string]any{k: v}, newOf(out)); e == nil {
			continue
		}
		if list, ok := v.([]any); ok {
			for i, el := range list {
				if e := fromUnstructured(map[string]any{k: []any{el}}, newOf(out)); e != nil {
					return fmt.Errorf("%s.%s[%d]: %w", path, k, i, e)
				}
			}
		}
		return fmt.Errorf("%s.%s: %w", path, k, fromUnstructured(map[string]any{k: v}, newOf(out)))
	}
	return fmt.Errorf("%s: %w", path, err)
}

// newOf returns a fresh value of out's type, so that a probe does not leave
// half-decoded fields behind.
func newOf(out any) any {
	switch out.(type) {
	case *corev1.Container:
		return &corev1.Container{}
	case *corev1.Volume:
		return &corev1.Volume{}
	}
	return out
}

// fromUnstructured is the apimachinery converter, with any panic turned
// into an error.
func fromUnstructured(m map[string]any, out any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot decode: %v", r)
		}
	}()
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, out)
}

// ModelAnnotations returns the ModelAnnotationPrefix annotations of m (an
// object's metadata, or any object with an "annotations" map) located at
// path, for ModelsFromAnnotations. Other annotations are not checked. An
// absent or null annotations map gives nil; annotations that are not an
// object, or a model annotation whose value is not a string, are an error
// naming its locator ("<path>.annotations[model.aibom.dev/name]"). A null
// model annotation reads as "".
func ModelAnnotations(m map[string]any, path string) (map[string]string, error) {
	annPath := fields.Path(path, "annotations")
	ann, err := fields.Object(m, "annotations", path)
	if err != nil || ann == nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range ann {
		if !strings.HasPrefix(k, ModelAnnotationPrefix) {
			continue
		}
		s, ok := v.(string)
		if !ok && v != nil {
			return nil, fields.TypeError(fields.Path(annPath, k), "string", v)
		}
		out[k] = s
	}
	return out, nil
}

// ClaimTemplateNames lists the names (metadata.name) of the
// volumeClaimTemplates of m (a StatefulSet spec, a LeaderWorkerSet's
// leaderWorkerTemplate, ...), for Options.VolumeClaimTemplates. Malformed
// entries and empty names are skipped; a nil m gives nil.
func ClaimTemplateNames(m map[string]any) []string {
	list, _ := m["volumeClaimTemplates"].([]any)
	var names []string
	for _, el := range list {
		c, _ := el.(map[string]any)
		meta, _ := c["metadata"].(map[string]any)
		if n, _ := meta["name"].(string); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// runtimesFromLabels reads the pod template labels serving platforms set
// (runtimeLabels) whose value names a known runtime exactly.
func runtimesFromLabels(meta map[string]any, path string) []adapter.Runtime {
	labels, _ := meta["labels"].(map[string]any)
	var out []adapter.Runtime
	for _, k := range runtimeLabels {
		v, _ := labels[k].(string)
		if rt, ok := runtimeFromName(v); ok {
			out = append(out, adapter.Runtime{Name: rt, Confidence: adapter.Inferred,
				Evidence: adapter.Evidence{Source: adapter.SourcePodTemplateLabel, Locator: path + ".labels[" + k + "]"}})
		}
	}
	return out
}

// frameworkLabelKeys are the label keys (the part after any "<prefix>/")
// whose value names a framework ("job-type: Horovod").
var frameworkLabelKeys = map[string]bool{"job-type": true, "framework": true, "training-framework": true}

// frameworksFromLabels reads the pod template labels whose key says they
// name a framework and whose value is one, by its canonical name or its
// image name ("Horovod", "tensorflow", "paddle").
func frameworksFromLabels(meta map[string]any, path string) []adapter.Framework {
	labels, _ := meta["labels"].(map[string]any)
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []adapter.Framework
	for _, k := range keys {
		if !frameworkLabelKeys[strings.ToLower(lastSegment(k))] {
			continue
		}
		v, _ := labels[k].(string)
		if fw, purpose, ok := frameworkFromName(v); ok {
			out = append(out, adapter.Framework{Name: fw, Purpose: purpose, Confidence: adapter.Inferred,
				Evidence: adapter.Evidence{Source: adapter.SourcePodTemplateLabel, Locator: path + ".labels[" + k + "]"}})
		}
	}
	return out
}
