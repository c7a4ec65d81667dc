//go:build qualify

package operators

import (
	"fmt"
	"testing"
)

// The operators of the qualification. Their versions are pinned in
// hack/operators/<name>/go.mod; hack/build-operators.sh builds them.

// controllerManagerConfig is the Configuration file LeaderWorkerSet and
// JobSet read (the same shape in both): no leader election, no metrics or
// probe listeners, the webhook server on 127.0.0.1 with the suite's
// certificate (their internal certificate management off: both would write
// into the same fixed directory otherwise).
func controllerManagerConfig(apiVersion string, p *process) string {
	return fmt.Sprintf(`apiVersion: %s
kind: Configuration
leaderElection:
  leaderElect: false
health:
  healthProbeBindAddress: "0"
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
internalCertManagement:
  enable: false
`, apiVersion, p.port, p.certDir)
}

var lwsOperator = &operator{
	name: "lws", module: "sigs.k8s.io/lws",
	crds:      []string{"config/crd/bases/*.yaml"},
	namespace: "lws-system", webhooks: "config/webhook", service: "lws-webhook-service", namePrefix: "lws-",
	args: func(t testing.TB, p *process) []string {
		return []string{"--config=" + p.writeFile(t, "config.yaml", controllerManagerConfig("config.lws.x-k8s.io/v1alpha1", p)), "--zap-log-level=info"}
	},
}

var jobsetOperator = &operator{
	name: "jobset", module: "sigs.k8s.io/jobset",
	crds:      []string{"config/components/crd/bases/*.yaml"},
	namespace: "jobset-system", webhooks: "config/components/webhook", service: "jobset-webhook-service", namePrefix: "jobset-",
	args: func(t testing.TB, p *process) []string {
		return []string{"--config=" + p.writeFile(t, "config.yaml", controllerManagerConfig("config.jobset.x-k8s.io/v1alpha1", p)), "--zap-log-level=info"}
	},
}

var kuberayOperator = &operator{
	name: "kuberay", module: "github.com/ray-project/kuberay/ray-operator",
	crds:      []string{"config/crd/bases/*.yaml"},
	namespace: "ray-system",
	// Its webhooks are off unless ENABLE_WEBHOOKS=true (the Helm chart's
	// default too).
	args: func(testing.TB, *process) []string {
		return []string{"--metrics-addr=0", "--health-probe-bind-address=0", "--enable-leader-election=false", "--log-stdout-encoder=console"}
	},
}

var trainerOperator = &operator{
	name: "trainer", module: "github.com/kubeflow/trainer/v2",
	crds:      []string{"manifests/base/crds/*.yaml"},
	namespace: "kubeflow-system", webhooks: "manifests/base/webhook", service: "kubeflow-trainer-controller-manager",
	// Its certificate rotator cannot be turned off: it signs for the
	// Service's name, writes into /tmp/k8s-webhook-server/serving-certs
	// and injects its CA into validator.trainer.kubeflow.org.
	ownCerts: true, secret: "kubeflow-trainer-webhook-cert", secretDir: "/tmp/k8s-webhook-server/serving-certs",
	args: func(t testing.TB, p *process) []string {
		return []string{"--metrics-bind-address=0", "--health-probe-bind-address=0", fmt.Sprintf("--webhook-server-port=%d", p.port)}
	},
}

func (o *operator) title() string {
	switch o.name {
	case "lws":
		return "LeaderWorkerSet"
	case "jobset":
		return "JobSet"
	case "kuberay":
		return "KubeRay ray-operator"
	case "trainer":
		return "Kubeflow Trainer"
	}
	return o.name
}

func moduleVersion(o *operator) string {
	v, ok := moduleInfos.Load(o.name)
	if !ok {
		return "?"
	}
	return v.(moduleInfo).Version
}

// startOperator installs o's CRDs (while the controller runs) and starts
// it.
func startOperator(t *testing.T, o *operator) *process {
	t.Helper()
	o.info(t)
	o.installCRDs(t)
	return o.start(t)
}
