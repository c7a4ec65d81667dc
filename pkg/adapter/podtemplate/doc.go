// Package podtemplate reads a Kubernetes pod template (or a bare pod spec) and
// returns what it says about AI serving: containers, serving runtimes, model
// claims and model storage, each with a confidence and an evidence locator.
//
// Every adapter, in tree or out of process, uses it for the parts of its
// objects that are pod templates, so that a Deployment, a Job and a Dynamo
// component running the same container give the same findings.
//
// # Entry points
//
// ScrapeTemplate reads a PodTemplateSpec (keys "metadata" and "spec") and
// ScrapePodSpec a bare PodSpec. Both take the template's locator prefix in the
// object ("spec.template", "spec.jobTemplate.spec.template",
// "spec.podSpec", ...) and build every locator from it, indexing lists by
// position: "spec.template.spec.containers[0].image". Both put exactly one
// entry, Scraper(), in Findings.Scrapers; an adapter that scrapes several
// templates of one object combines the results with MergeFindings, which
// keeps one entry per scraper. ScrapeContainer and the other helpers return
// no Scrapers entry: the caller that uses them names its own scraper.
//
// Adapters that read a CRD's own fields, not a pod template, share its rules
// through ModelAnnotations (the model annotations of a metadata object),
// ClaimTemplateNames (for Options.VolumeClaimTemplates), IsVersionTag (when a
// tag versions a runtime) and RedactInto (redact a value, record why). The
// typed field readers with locators they use are in package
// pkg/adapter/fields.
//
// # Heuristics
//
//   - Containers and init containers become adapter.Container entries
//     (source image_reference, locator of the image field).
//   - A model flag (--model, --model-id, --model-path, --model-repository,
//     --model-name, --served-model-name) in command or args, written
//     "--flag value" or "--flag=value", is a declared model; the locator names
//     the element holding the flag: "...args[3](--model)". The positional
//     form "vllm serve <model>" is an inferred model. Kubernetes "$(VAR)"
//     references are expanded from the container's literal env values;
//     values that still hold a "$" (shell variables) are skipped.
//   - A literal env value of HF_MODEL_ID, MODEL_NAME, NIM_MODEL_NAME or
//     NIM_SERVED_MODEL_NAME is an inferred model. valueFrom is never read.
//   - A volume mounted at /models, /model, /weights, /checkpoints, /hf_cache
//     or /root/.cache/huggingface, or below one of them (path boundary:
//     /models/llama matches, /models-shared does not), is inferred model
//     storage (adapter.Data), named after the volume and its source.
//   - An image whose normalised repository matches a known serving image
//     (see RuntimeFromImage) is an inferred runtime. Init containers are not
//     runtimes unless they are sidecars (restartPolicy: Always).
//   - Annotations "model.aibom.dev/<anything>" on the workload
//     (Options.WorkloadAnnotations) or on the pod template are declared
//     models; see ModelAnnotationPrefix for the convention.
//
// # Secrets
//
// No secret reaches the findings. Env vars whose name looks like a secret
// (IsSecretName) are never read; a literal value there is recorded as a
// "secret-name" redaction. Every value that becomes a model or data name goes
// through Redact, which masks URL credentials and token-shaped strings and
// records one adapter.Redaction per field and reason; env var names and
// annotation keys are masked the same way where they appear in a locator.
// Image references are
// reported verbatim: registries do not accept credentials in references and
// the core needs them unchanged to match pod statuses.
//
// # Malformed input
//
// Only the fields the heuristics read are decoded (with the apimachinery
// unstructured converter, into corev1 types). A wrong type in one of them is
// an error naming its locator; a wrong type anywhere else is ignored. Nothing
// panics, and the same input always gives the same findings, in spec order.
package podtemplate
