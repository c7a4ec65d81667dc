package release

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/internal/manifest"
	shippedrbac "github.com/aibom-dev/aibom/test/envtest/rbac"
)

const (
	releaseName      = "aibom"
	releaseNamespace = "aibom-system"
)

// repoPath is a path relative to the repository root.
func repoPath(elem ...string) string {
	return filepath.Join(append([]string{"..", ".."}, elem...)...)
}

var chartDir = repoPath("charts", "aibom")

// kubeVersion is the version of the API server the tests run against.
var kubeVersion = &chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}

// rendered is the chart rendered for one set of values.
type rendered struct {
	// CRDs are the chart's crds/ objects; Objects the templates' output.
	CRDs, Objects []*unstructured.Unstructured
	Notes         string
}

// find returns the rendered object of kind and name, or nil.
func (r *rendered) find(kind, name string) *unstructured.Unstructured {
	for _, o := range r.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// render renders the chart as `helm install --dry-run` would (client only,
// against Kubernetes 1.37), with values given as YAML.
func render(t *testing.T, valuesYAML string) *rendered {
	t.Helper()
	ch, err := loader.Load(chartDir)
	require.NoError(t, err)
	vals := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(valuesYAML), &vals))

	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = releaseName, releaseNamespace
	install.KubeVersion = kubeVersion
	rel, err := install.Run(ch, vals)
	require.NoError(t, err, "render the chart with values:\n%s", valuesYAML)

	out := &rendered{Notes: rel.Info.Notes}
	out.Objects, err = manifest.Decode("rendered chart", []byte(rel.Manifest))
	require.NoError(t, err)
	for _, crd := range ch.CRDObjects() {
		objs, err := manifest.Decode(crd.Filename, crd.File.Data)
		require.NoError(t, err)
		out.CRDs = append(out.CRDs, objs...)
	}
	return out
}

// into converts an unstructured object to a typed one.
func into[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	require.NotNil(t, o)
	v := new(T)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, v))
	return v
}

// nonDefaultValues exercises every optional part of the chart.
const nonDefaultValues = `
image: {digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
replicaCount: 3
adapters: [apps, batch]
plugins:
  enabled: true
  initContainers:
    - name: ollama-plugin
      image: example.com/aibom-ollama-plugin:v1
      command: [cp, /aibom-ollama, /plugins/]
      volumeMounts: [{name: plugins, mountPath: /plugins}]
      securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
  extraVolumes: [{name: ollama-image, image: {reference: "example.com/aibom-ollama-plugin:v1"}}]
  paths: ["ollama@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"]
  callTimeout: 20s
  maxResponseBytes: 8388608
rbac:
  extraRules:
    - apiGroups: [ollama.ayaka.io]
      resources: [models]
      verbs: [get, list, watch]
logging: {level: debug, format: console}
metrics:
  certSecretName: aibom-metrics-tls
  readers: [{name: prometheus-k8s, namespace: monitoring}]
  serviceMonitor: {enabled: true, labels: {release: prometheus}}
networkPolicy:
  metricsFrom: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}]
  egress: [{ports: [{port: 443, protocol: TCP}, {port: 6443, protocol: TCP}]}]
priorityClassName: system-cluster-critical
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: dedicated, operator: Equal, value: control, effect: NoSchedule}]
resources: {requests: {cpu: 200m, memory: 256Mi}, limits: {cpu: "2", memory: 1Gi}}
`

// TestChartLint is `helm lint --strict` with default and non-default values.
func TestChartLint(t *testing.T) {
	for name, values := range map[string]string{"defaults": "", "non-default": nonDefaultValues} {
		t.Run(name, func(t *testing.T) {
			vals := map[string]any{}
			require.NoError(t, yaml.Unmarshal([]byte(values), &vals))
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = releaseNamespace
			lint.KubeVersion = kubeVersion
			res := lint.Run([]string{chartDir}, vals)
			for _, m := range res.Messages {
				// INFO is advice ("icon is recommended"); anything above fails.
				require.LessOrEqual(t, m.Severity, support.InfoSev, "helm lint: %s", m)
			}
			require.Empty(t, res.Errors)
		})
	}
}

// TestChartCRDIsTheGeneratedCRD: the chart installs exactly the CRD that
// controller-gen generates into config/crd (make generate copies it).
func TestChartCRDIsTheGeneratedCRD(t *testing.T) {
	r := render(t, "")
	generated, err := manifest.Load(repoPath("config", "crd", "bases"))
	require.NoError(t, err)
	require.Equal(t, generated, r.CRDs)
	for _, crd := range r.CRDs {
		categories, _, _ := unstructured.NestedStringSlice(crd.Object, "spec", "names", "categories")
		require.NotContains(t, categories, "all", "%s must not show up in kubectl get all", crd.GetName())
		// kubectl expands a category before a resource name: a category
		// "aibom" would make `kubectl get aibom NAME` fail and list the
		// profiles and configs with the AIBOMs.
		require.NotContains(t, categories, "aibom", crd.GetName())
		require.Contains(t, categories, "aibom-all", crd.GetName())
	}
}

// TestChartMatchesKustomize: config/default and the chart with default values
// install the same objects, apart from the Namespace (helm install
// --create-namespace) and the labels Helm adds.
func TestChartMatchesKustomize(t *testing.T) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), repoPath("config", "default"))
	require.NoError(t, err)
	out, err := resMap.AsYaml()
	require.NoError(t, err)
	kustomized, err := manifest.Decode("config/default", out)
	require.NoError(t, err)

	r := render(t, "")
	chartObjs := map[string]*unstructured.Unstructured{}
	for _, o := range append(slices.Clone(r.CRDs), r.Objects...) {
		chartObjs[identity(o)] = comparable(o)
	}
	seen := map[string]bool{}
	for _, o := range kustomized {
		id := identity(o)
		if o.GetKind() == "Namespace" {
			continue
		}
		seen[id] = true
		got, ok := chartObjs[id]
		require.True(t, ok, "config/default installs %s; the chart does not", id)
		require.Equal(t, comparable(o).Object, got.Object, "%s differs between config/default and the chart", id)
	}
	for id := range chartObjs {
		require.True(t, seen[id], "the chart installs %s by default; config/default does not", id)
	}
}

func identity(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// comparable drops what legitimately differs between a Helm and a kustomize
// install: the standard app.kubernetes.io and helm.sh labels.
func comparable(o *unstructured.Unstructured) *unstructured.Unstructured {
	o = o.DeepCopy()
	strip := func(path ...string) {
		labels, found, _ := unstructured.NestedStringMap(o.Object, path...)
		if !found {
			return
		}
		for k := range labels {
			if strings.HasPrefix(k, "app.kubernetes.io/") || strings.HasPrefix(k, "helm.sh/") {
				delete(labels, k)
			}
		}
		if len(labels) == 0 {
			unstructured.RemoveNestedField(o.Object, path...)
			return
		}
		_ = unstructured.SetNestedStringMap(o.Object, labels, path...)
	}
	strip("metadata", "labels")
	strip("spec", "template", "metadata", "labels")
	return o
}

// TestChartRBACIsTheEnvtestRBAC: with default values the chart grants the
// controller exactly the rules the envtest suites run it with
// (test/envtest/rbac reads config/rbac).
func TestChartRBACIsTheEnvtestRBAC(t *testing.T) {
	shipped, err := shippedrbac.Load()
	require.NoError(t, err)
	r := render(t, "")
	role := into[rbacv1.ClusterRole](t, r.find("ClusterRole", shipped.ClusterRole.Name))
	require.Equal(t, shipped.ClusterRole.Rules, role.Rules)

	binding := into[rbacv1.ClusterRoleBinding](t, r.find("ClusterRoleBinding", shipped.ClusterRole.Name))
	require.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: shipped.ServiceAccount, Namespace: shipped.Namespace}}, binding.Subjects)
	require.Equal(t, releaseNamespace, shipped.Namespace)

	var envtestLeaderRole *rbacv1.Role
	for _, o := range shipped.Objects {
		if o.GetKind() == "Role" {
			envtestLeaderRole = into[rbacv1.Role](t, o)
		}
	}
	leader := into[rbacv1.Role](t, r.find("Role", envtestLeaderRole.Name))
	require.Equal(t, envtestLeaderRole.Rules, leader.Rules)

	require.NotNil(t, shipped.Extensions, "config/rbac binds the aggregated extensions role")
	ext := into[rbacv1.ClusterRole](t, r.find("ClusterRole", shipped.Extensions.Name))
	require.Equal(t, shipped.Extensions.AggregationRule, ext.AggregationRule)
	require.Empty(t, ext.Rules)
}

// TestChartAggregatesExtensionRoles: a plugin or profile brings its own
// read permissions in a ClusterRole labelled
// aibom.dev/aggregate-to-controller: "true"; the chart aggregates those into
// a role bound to the controller (unless rbac.aggregation is false).
func TestChartAggregatesExtensionRoles(t *testing.T) {
	r := render(t, "")
	role := into[rbacv1.ClusterRole](t, r.find("ClusterRole", "aibom-controller-extensions"))
	require.NotNil(t, role.AggregationRule)
	require.Len(t, role.AggregationRule.ClusterRoleSelectors, 1)
	require.Equal(t, map[string]string{"aibom.dev/aggregate-to-controller": "true"}, role.AggregationRule.ClusterRoleSelectors[0].MatchLabels)
	binding := into[rbacv1.ClusterRoleBinding](t, r.find("ClusterRoleBinding", "aibom-controller-extensions"))
	require.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "aibom-controller-extensions"}, binding.RoleRef)
	require.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "aibom-controller", Namespace: releaseNamespace}}, binding.Subjects)

	off := render(t, "rbac: {aggregation: false}")
	require.Nil(t, off.find("ClusterRole", "aibom-controller-extensions"))
	require.Nil(t, off.find("ClusterRoleBinding", "aibom-controller-extensions"))
}

// grant is one verb on one resource of one group.
type grant struct{ group, resource, verb string }

// controllerGrants lists every grant of the controller's ServiceAccount in
// the rendered chart (ClusterRoles and Roles bound to it), failing on a grant
// given twice.
func controllerGrants(t *testing.T, r *rendered) []grant {
	t.Helper()
	bound := map[string]bool{}
	for _, o := range r.Objects {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		b := into[rbacv1.RoleBinding](t, o)
		for _, s := range b.Subjects {
			if s.Kind == "ServiceAccount" && s.Name == "aibom-controller" {
				bound[b.RoleRef.Kind+"/"+b.RoleRef.Name] = true
			}
		}
	}
	var grants []grant
	seen := map[grant]string{}
	for _, o := range r.Objects {
		if (o.GetKind() != "ClusterRole" && o.GetKind() != "Role") || !bound[o.GetKind()+"/"+o.GetName()] {
			continue
		}
		role := into[rbacv1.ClusterRole](t, o)
		for _, rule := range role.Rules {
			require.Empty(t, rule.NonResourceURLs, "the controller needs no non-resource URL")
			require.Empty(t, rule.ResourceNames)
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, v := range rule.Verbs {
						gr := grant{g, res, v}
						require.Empty(t, seen[gr], "%v granted twice: by %s and %s", gr, seen[gr], o.GetName())
						seen[gr] = o.GetName()
						grants = append(grants, gr)
					}
				}
			}
		}
	}
	require.NotEmpty(t, grants)
	return grants
}

// TestChartRBACIsMinimal: no wildcard, no Secret or ConfigMap access, no
// grant twice, and writes only on AIBOMs, Events, the Lease and the reviews
// that authenticate metrics scrapers; the same with non-default values.
func TestChartRBACIsMinimal(t *testing.T) {
	writes := map[string][]string{
		"aibom.dev/aiboms":                          {"create", "update", "patch", "delete"},
		"aibom.dev/aiboms/status":                   {"update", "patch"},
		"aibom.dev/aibomadapterprofiles/status":     {"update", "patch"},
		"aibom.dev/aibomconfigs/status":             {"update", "patch"},
		"/events":                                   {"create", "patch"},
		"events.k8s.io/events":                      {"create", "patch"},
		"coordination.k8s.io/leases":                {"create", "update"},
		"authentication.k8s.io/tokenreviews":        {"create"},
		"authorization.k8s.io/subjectaccessreviews": {"create"},
	}
	for name, values := range map[string]string{"defaults": "", "non-default": nonDefaultValues} {
		t.Run(name, func(t *testing.T) {
			for _, g := range controllerGrants(t, render(t, values)) {
				require.NotContains(t, []string{g.group, g.resource, g.verb}, "*", "wildcard in %v", g)
				require.NotContains(t, []string{"secrets", "configmaps", "serviceaccounts/token"}, g.resource, "%v", g)
				if slices.Contains([]string{"get", "list", "watch"}, g.verb) {
					continue
				}
				require.Contains(t, writes[g.group+"/"+g.resource], g.verb, "write %v is not one the controller needs", g)
			}
		})
	}
}

// TestChartAdaptersTrimRBAC: enabling fewer adapters grants fewer kinds.
func TestChartAdaptersTrimRBAC(t *testing.T) {
	groups := func(values string) []string {
		set := map[string]bool{}
		for _, g := range controllerGrants(t, render(t, values)) {
			set[g.group] = true
		}
		var out []string
		for g := range set {
			out = append(out, g)
		}
		sort.Strings(out)
		return out
	}
	all := groups("")
	for _, g := range []string{"apps", "batch", "nvidia.com", "apps.nvidia.com", "grove.io", "leaderworkerset.x-k8s.io", "disaggregatedset.x-k8s.io"} {
		require.Contains(t, all, g)
	}
	some := groups("adapters: [apps, batch]\nmetrics: {secure: false}")
	require.Equal(t, []string{"", "aibom.dev", "apiextensions.k8s.io", "apps", "batch", "coordination.k8s.io", "events.k8s.io"}, some)
}

// TestChartGenericOwnerGroups: rbac.genericOwnerGroups grants reading (never
// writing) every kind of the named groups, so that owners no adapter
// declares are read as generic roots; by default nothing of the sort.
func TestChartGenericOwnerGroups(t *testing.T) {
	readsAll := func(values, group string) (verbs []string) {
		for _, g := range controllerGrants(t, render(t, values)) {
			if g.group == group && g.resource == "*" {
				verbs = append(verbs, g.verb)
			}
		}
		sort.Strings(verbs)
		return verbs
	}
	require.Empty(t, readsAll("", "serving.example.com"))
	require.Equal(t, []string{"get", "list", "watch"}, readsAll("rbac: {genericOwnerGroups: [serving.example.com, eval.example.org]}", "serving.example.com"))
	require.Equal(t, []string{"get", "list", "watch"}, readsAll("rbac: {genericOwnerGroups: [serving.example.com, eval.example.org]}", "eval.example.org"))
}

// TestChartSecureDefaults: the pod as a security review reads it.
func TestChartSecureDefaults(t *testing.T) {
	for name, values := range map[string]string{"defaults": "", "non-default": nonDefaultValues} {
		t.Run(name, func(t *testing.T) {
			r := render(t, values)
			d := into[appsv1.Deployment](t, r.find("Deployment", "aibom-controller"))
			pod := d.Spec.Template.Spec
			require.True(t, *pod.SecurityContext.RunAsNonRoot)
			require.EqualValues(t, 65532, *pod.SecurityContext.RunAsUser)
			require.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)
			require.False(t, pod.HostNetwork || pod.HostPID || pod.HostIPC)
			for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
				if c.Name != "manager" {
					continue // a plugin's init container is the user's
				}
				sc := c.SecurityContext
				require.False(t, *sc.AllowPrivilegeEscalation)
				require.True(t, *sc.ReadOnlyRootFilesystem)
				require.False(t, *sc.Privileged)
				require.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
				require.Empty(t, sc.Capabilities.Add)
				require.False(t, c.Resources.Requests.Cpu().IsZero())
				require.False(t, c.Resources.Requests.Memory().IsZero())
				require.False(t, c.Resources.Limits.Memory().IsZero())
				require.False(t, c.Resources.Limits.Cpu().IsZero())
				require.Contains(t, c.Args, "--leader-elect")
				require.NotContains(t, c.Args, "--metrics-secure=false")
				require.NotContains(t, c.Args, "--zap-devel")
				require.NotNil(t, c.ReadinessProbe)
				require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
				require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
				for _, e := range c.Env {
					require.Nil(t, e.ValueFrom.SecretKeyRef, "no Secret in the environment")
				}
			}
			if name == "defaults" {
				c := pod.Containers[0]
				require.Equal(t, "ghcr.io/aibom-dev/aibom-controller:"+readVersion(t), c.Image)
				require.Contains(t, c.Args, "--zap-log-level=info")
				require.Contains(t, c.Args, "--zap-encoder=json")
				require.EqualValues(t, 2, *d.Spec.Replicas)
				require.NotNil(t, pod.Affinity.PodAntiAffinity)
				require.NotNil(t, r.find("PodDisruptionBudget", "aibom-controller"))
				require.NotNil(t, r.find("NetworkPolicy", "aibom-controller"))
				require.Nil(t, r.find("ServiceMonitor", "aibom-controller"), "no Prometheus Operator is assumed")
				require.Empty(t, pod.Volumes, "no volume, no Secret mounted by default")
			}
		})
	}
}

// TestChartNonDefaultValues: each value reaches the object it is for.
func TestChartNonDefaultValues(t *testing.T) {
	r := render(t, nonDefaultValues)
	d := into[appsv1.Deployment](t, r.find("Deployment", "aibom-controller"))
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	require.Equal(t, "ghcr.io/aibom-dev/aibom-controller@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", c.Image, "by digest")
	require.EqualValues(t, 3, *d.Spec.Replicas)
	require.Contains(t, c.Args, "--adapters=apps,batch")
	require.Contains(t, c.Args, "--adapter-plugin=/plugins/ollama@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	require.NotContains(t, c.Args, "--adapter-plugin-dir=/plugins", "named plugins are loaded by name, not the whole directory too")
	require.Contains(t, c.Args, "--adapter-plugin-call-timeout=20s")
	require.Contains(t, c.Args, "--adapter-plugin-max-response-bytes=8388608")
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
	}
	require.True(t, volumes["ollama-image"] && volumes["plugins"], "the init containers' extra volume is in the pod: %v", volumes)
	require.Contains(t, c.Args, "--metrics-cert-dir=/etc/aibom/metrics-tls")
	require.Contains(t, c.Args, "--zap-log-level=debug")
	require.Equal(t, "system-cluster-critical", pod.PriorityClassName)
	require.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, pod.NodeSelector)
	require.Len(t, pod.Tolerations, 1)
	require.Len(t, pod.InitContainers, 1)
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	require.Equal(t, map[string]string{"plugins": "/plugins", "tmp": "/tmp", "metrics-tls": "/etc/aibom/metrics-tls"}, mounts,
		"plugins need a writable /tmp; the root filesystem stays read-only")
	require.Equal(t, "2", c.Resources.Limits.Cpu().String())

	role := into[rbacv1.ClusterRole](t, r.find("ClusterRole", "aibom-controller"))
	require.Contains(t, role.Rules, rbacv1.PolicyRule{APIGroups: []string{"ollama.ayaka.io"}, Resources: []string{"models"}, Verbs: []string{"get", "list", "watch"}})
	readers := into[rbacv1.ClusterRoleBinding](t, r.find("ClusterRoleBinding", "aibom-metrics-reader"))
	require.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: "monitoring"}}, readers.Subjects)

	sm := r.find("ServiceMonitor", "aibom-controller")
	require.NotNil(t, sm)
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	endpoint := endpoints[0].(map[string]any)
	require.Equal(t, "https", endpoint["scheme"])
	require.NotContains(t, endpoint, "bearerTokenFile", "deprecated by the Prometheus Operator")
	require.Equal(t, map[string]any{"type": "Bearer", "credentials": map[string]any{"name": "aibom-metrics-scraper-token", "key": "token"}}, endpoint["authorization"])
	require.Equal(t, map[string]any{
		"ca":                 map[string]any{"secret": map[string]any{"name": "aibom-metrics-tls", "key": "ca.crt"}},
		"serverName":         "aibom-controller-metrics." + releaseNamespace + ".svc",
		"insecureSkipVerify": false,
	}, endpoint["tlsConfig"], "verified, with the CA of the certificate Secret by default")
	// The identity it scrapes with: a ServiceAccount bound to
	// aibom-metrics-reader only, and its token Secret.
	scraper := into[rbacv1.ClusterRoleBinding](t, r.find("ClusterRoleBinding", "aibom-metrics-scraper"))
	require.Equal(t, "aibom-metrics-reader", scraper.RoleRef.Name)
	require.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "aibom-metrics-scraper", Namespace: releaseNamespace}}, scraper.Subjects)
	token := r.find("Secret", "aibom-metrics-scraper-token")
	require.NotNil(t, token)
	require.Equal(t, "aibom-metrics-scraper", token.GetAnnotations()["kubernetes.io/service-account.name"])
	require.NotNil(t, r.find("PodDisruptionBudget", "aibom-controller"))
}

// TestChartServiceMonitorTLS: the ServiceMonitor verifies the metrics
// certificate unless told not to; a self-signed certificate it could never
// verify is refused when the chart is rendered, not found at the first
// failed scrape; a token Secret of one's own replaces the chart's scraper.
func TestChartServiceMonitorTLS(t *testing.T) {
	endpoint := func(t *testing.T, values string) map[string]any {
		t.Helper()
		r := render(t, values)
		sm := r.find("ServiceMonitor", "aibom-controller")
		require.NotNil(t, sm)
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		return endpoints[0].(map[string]any)
	}
	e := endpoint(t, `metrics: {serviceMonitor: {enabled: true, ca: {configMap: {name: my-ca, key: root.pem}}, serverName: metrics.example}}`)
	require.Equal(t, map[string]any{"ca": map[string]any{"configMap": map[string]any{"name": "my-ca", "key": "root.pem"}}, "serverName": "metrics.example", "insecureSkipVerify": false}, e["tlsConfig"])
	e = endpoint(t, `metrics: {serviceMonitor: {enabled: true, insecureSkipVerify: true, bearerTokenSecret: {name: prom-token, key: t}}}`)
	require.Equal(t, map[string]any{"insecureSkipVerify": true}, e["tlsConfig"])
	require.Equal(t, map[string]any{"type": "Bearer", "credentials": map[string]any{"name": "prom-token", "key": "t"}}, e["authorization"])
	r := render(t, `metrics: {serviceMonitor: {enabled: true, insecureSkipVerify: true, bearerTokenSecret: {name: prom-token}}}`)
	require.Nil(t, r.find("ServiceAccount", "aibom-metrics-scraper"), "a token of one's own: no scraper made")
	require.Nil(t, r.find("Secret", "aibom-metrics-scraper-token"))

	ch, err := loader.Load(chartDir)
	require.NoError(t, err)
	vals := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(`metrics: {serviceMonitor: {enabled: true}}`), &vals))
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.ReleaseName, install.Namespace = true, true, releaseName, releaseNamespace
	install.KubeVersion = kubeVersion
	_, err = install.Run(ch, vals)
	require.ErrorContains(t, err, "self-signed metrics certificate cannot be verified")
}

// TestChartRejectsBadValues: values.schema.json refuses a misspelt value
// (instead of silently ignoring it) and values the controller would refuse.
func TestChartRejectsBadValues(t *testing.T) {
	ch, err := loader.Load(chartDir)
	require.NoError(t, err)
	for values, want := range map[string]string{
		"image: {digest: latest}":         "/image/digest",
		"replicacount: 3":                 "replicacount",
		"adapters: [notanadapter]":        "/adapters/0",
		"logging: {format: text}":         "/logging/format",
		"metrics: {readers: [{name: p}]}": "namespace",
		"plugins: {paths: [/bin/sh]}":     "/plugins/paths/0",
		"plugins: {callTimeout: soon}":    "/plugins/callTimeout",
		"plugins: {maxResponseBytes: 10}": "/plugins/maxResponseBytes",
	} {
		vals := map[string]any{}
		require.NoError(t, yaml.Unmarshal([]byte(values), &vals))
		install := action.NewInstall(&action.Configuration{})
		install.DryRun, install.ClientOnly, install.ReleaseName, install.Namespace = true, true, releaseName, releaseNamespace
		install.KubeVersion = kubeVersion
		_, err = install.Run(ch, vals)
		require.ErrorContains(t, err, want, "values %s", values)
	}
}

// TestChartSinkSecretsByName: the controller may get exactly the Secrets
// the sinks name, in its own namespace, and no Secret by default.
func TestChartSinkSecretsByName(t *testing.T) {
	for _, o := range render(t, "").Objects {
		require.NotEqual(t, "aibom-sink-secrets", o.GetName(), "no Secret access without sinks")
	}
	r := render(t, "sinks: {secretNames: [dtrack-api-key, hook-token]}")
	var role *rbacv1.Role
	var binding *rbacv1.RoleBinding
	for _, o := range r.Objects {
		switch {
		case o.GetKind() == "Role" && o.GetName() == "aibom-sink-secrets":
			role = into[rbacv1.Role](t, o)
		case o.GetKind() == "RoleBinding" && o.GetName() == "aibom-sink-secrets":
			binding = into[rbacv1.RoleBinding](t, o)
		}
	}
	require.NotNil(t, role)
	require.NotNil(t, binding)
	require.Equal(t, releaseNamespace, role.Namespace)
	require.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"dtrack-api-key", "hook-token"}, Verbs: []string{"get"}}}, role.Rules)
	require.Equal(t, "aibom-sink-secrets", binding.RoleRef.Name)
	require.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "aibom-controller", Namespace: releaseNamespace}}, binding.Subjects)
}

// TestChartKnowsEveryAdapter: values.schema.json accepts exactly the
// adapters the binary has (Go adapters and shipped profiles), and the chart
// grants each one, enabled alone, read access to every kind it declares.
func TestChartKnowsEveryAdapter(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	require.NoError(t, err)
	var schema struct {
		Properties struct {
			Adapters struct {
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"adapters"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(raw, &schema))
	require.Equal(t, append([]string{"all"}, intree.Names()...), schema.Properties.Adapters.Items.Enum,
		"values.schema.json's adapter names must be the binary's (adapters/intree.Names)")

	all := intree.All()
	for _, name := range intree.Names() {
		t.Run(name, func(t *testing.T) {
			granted := map[string]bool{}
			for _, g := range controllerGrants(t, render(t, "adapters: ["+name+"]")) {
				if g.verb == "watch" {
					granted[g.group+"/"+g.resource] = true
				}
			}
			for _, k := range all[name].Kinds() {
				require.True(t, granted[k.Group+"/"+k.Resource], "adapter %s alone: no list/watch on %s.%s", name, k.Resource, k.Group)
			}
		})
	}
}

// TestChartSinkEgress: with egress restricted, sinks.egress is added for
// the sinks' receivers; without a restriction nothing is rendered.
func TestChartSinkEgress(t *testing.T) {
	sinkRule := `{to: [{ipBlock: {cidr: 203.0.113.10/32}}], ports: [{port: 443, protocol: TCP}]}`
	open := into[networkingv1.NetworkPolicy](t, render(t, "sinks: {egress: ["+sinkRule+"]}").find("NetworkPolicy", "aibom-controller"))
	require.NotContains(t, open.Spec.PolicyTypes, networkingv1.PolicyTypeEgress, "egress not restricted: nothing to add")
	require.Empty(t, open.Spec.Egress)

	np := into[networkingv1.NetworkPolicy](t, render(t, `
networkPolicy: {egress: [{ports: [{port: 6443, protocol: TCP}]}]}
sinks: {egress: [`+sinkRule+`]}`).find("NetworkPolicy", "aibom-controller"))
	require.Contains(t, np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
	require.Len(t, np.Spec.Egress, 2, "the API server rule, then the sinks'")
	require.Equal(t, "203.0.113.10/32", np.Spec.Egress[1].To[0].IPBlock.CIDR)
}
