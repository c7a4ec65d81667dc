package release

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

const (
	eventually = 60 * time.Second
	tick       = 200 * time.Millisecond
)

// TestQualification installs the chart as rendered with default values
// into the control plane, runs the real controller binary (built as `make
// build` builds it) with the Deployment's arguments under the chart's
// ServiceAccount token, and checks what a platform team checks before
// admitting it: ready only when it can work, metrics only to an authorized
// scraper, a namespace opted in gets a Ready AIBOM with a valid CycloneDX 1.6
// document naming VERSION, a relevant change is reflected, an irrelevant one
// writes nothing, deleting the workload removes its AIBOM, and a lost
// permission makes it unready.
func TestQualification(t *testing.T) {
	ctx := context.Background()
	r := render(t, "")
	require.NoError(t, applyObjects(ctx, r.Objects, false), "install the rendered chart")
	deployment := into[appsv1.Deployment](t, r.find("Deployment", "aibom-controller"))
	sa := deployment.Spec.Template.Spec.ServiceAccountName

	// The controller, as the chart runs it: the Deployment's arguments,
	// with its ports on loopback and, out of cluster, the Lease's namespace
	// and a kubeconfig holding the ServiceAccount's token.
	metricsAddr, probeAddr := freeAddr(t), freeAddr(t)
	args := []string{"--kubeconfig", kubeconfigFor(t, releaseNamespace, sa), "--leader-election-namespace", releaseNamespace, "--readiness-check-interval=1s"}
	for _, a := range deployment.Spec.Template.Spec.Containers[0].Args {
		switch {
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + metricsAddr
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + probeAddr
		}
		args = append(args, a)
	}
	logs := startController(t, args)

	readyz := func() int { return httpStatus("http://" + probeAddr + "/readyz") }
	require.Eventually(t, func() bool { return readyz() == http.StatusOK }, eventually, tick, "never ready; logs:\n%s", logs)

	// Metrics: HTTPS; no token is 401, a token without the reader role is
	// 403, a ServiceAccount bound to aibom-metrics-reader reads them.
	metricsURL := "https://" + metricsAddr + "/metrics"
	require.Eventually(t, func() bool { return scrape(t, metricsURL, "").status != 0 }, eventually, tick, "the metrics endpoint never answered")
	require.Equal(t, http.StatusUnauthorized, scrape(t, metricsURL, "").status)
	stranger := newServiceAccount(t, "default", "stranger")
	require.Equal(t, http.StatusForbidden, scrape(t, metricsURL, stranger).status)
	scraper := newServiceAccount(t, "default", "scraper")
	require.NoError(t, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper-reads-aibom-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "aibom-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: "default"}},
	}))
	var body string
	require.Eventually(t, func() bool {
		s := scrape(t, metricsURL, scraper)
		body = s.body
		return s.status == http.StatusOK
	}, eventually, tick, "the bound scraper never read the metrics")
	require.Contains(t, body, "aibom_api_requests_total")

	// A namespace opts in; a digest-pinned Deployment gets a Ready AIBOM.
	ns := env.NewNamespace(t, "q", true)
	const digest = "sha256:5f3c0b2d1e4a69788c7b6a5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f"
	workload := env.MustApply(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  selector: {matchLabels: {app: chat}}
  template:
    metadata: {labels: {app: chat}}
    spec:
      containers:
        - name: vllm
          image: "docker.io/vllm/vllm-openai@`+digest+`"
          args: [--model, meta-llama/Llama-3.1-8B-Instruct]
`)[0]
	key := client.ObjectKey{Namespace: ns, Name: aibomName(t, ns)}
	aibom := waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return a.Status.Summary.Model == "meta-llama/Llama-3.1-8B-Instruct" }, logs)
	doc := []byte(aibom.Status.Document)
	require.NoError(t, document.ValidateSchema(doc), "a valid CycloneDX 1.6 document")
	var bom struct {
		SpecVersion string `json:"specVersion"`
		Components  []struct {
			Type   string `json:"type"`
			Hashes []struct {
				Alg     string `json:"alg"`
				Content string `json:"content"`
			} `json:"hashes"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(doc, &bom))
	require.Equal(t, "1.6", bom.SpecVersion)
	var digests []string
	for _, c := range bom.Components {
		for _, h := range c.Hashes {
			if c.Type == "container" && h.Alg == "SHA-256" {
				digests = append(digests, "sha256:"+h.Content)
			}
		}
	}
	require.Equal(t, []string{digest}, digests, "the container's digest, from the pinned image reference")
	require.Equal(t, readVersion(t), toolVersion(t, doc), "the document names the controller's VERSION")
	require.Equal(t, aibom.Generation, aibom.Status.ObservedGeneration)
	require.Equal(t, "True", kubectlGetColumn(t, ns, "Ready"), "kubectl get aibom shows it Ready")

	// A relevant change (another model) is reflected.
	var d appsv1.Deployment
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "chat"}, &d))
	d.Spec.Template.Spec.Containers[0].Args = []string{"--model", "Qwen/Qwen2.5-7B-Instruct"}
	require.NoError(t, env.Client.Update(ctx, &d))
	aibom = waitAIBOM(t, key, func(a *v1alpha1.AIBOM) bool { return a.Status.Summary.Model == "Qwen/Qwen2.5-7B-Instruct" }, logs)

	// An irrelevant change (an annotation) is reconciled and writes nothing.
	unchanged := func() float64 {
		return metricSum(scrape(t, metricsURL, scraper).body, "aibom_workload_reconcile_outcomes_total", `outcome="unchanged"`)
	}
	before := unchanged()
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "chat"}, &d))
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations["team"] = "platform"
	require.NoError(t, env.Client.Update(ctx, &d))
	require.Eventually(t, func() bool { return unchanged() > before }, eventually, tick, "the annotation was never reconciled")
	var after v1alpha1.AIBOM
	require.NoError(t, env.Client.Get(ctx, key, &after))
	require.Equal(t, aibom.ResourceVersion, after.ResourceVersion, "an irrelevant change wrote the AIBOM")

	// Deleting the workload removes its AIBOM.
	require.NoError(t, env.Client.Delete(ctx, workload))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, &v1alpha1.AIBOM{}))
	}, eventually, tick, "the AIBOM outlived its workload")

	// A lost permission makes the controller unready, and ready again once
	// it is back: /readyz is not just "the process is up".
	var role rbacv1.ClusterRole
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: "aibom-controller"}, &role))
	full := role.DeepCopy()
	var kept []rbacv1.PolicyRule
	for _, rule := range role.Rules {
		if len(rule.Resources) == 1 && rule.Resources[0] == "aiboms/status" {
			continue
		}
		kept = append(kept, rule)
	}
	role.Rules = kept
	require.NoError(t, env.Client.Update(ctx, &role))
	require.Eventually(t, func() bool { return readyz() == http.StatusInternalServerError }, eventually, tick, "still ready without aiboms/status: %s", readyzVerbose(probeAddr))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: "aibom-controller"}, &role))
	role.Rules = full.Rules
	require.NoError(t, env.Client.Update(ctx, &role))
	require.Eventually(t, func() bool { return readyz() == http.StatusOK }, eventually, tick, "not ready again with the permission back")

	require.Contains(t, logs.String(), `"msg":"not ready","reason":"permissions missing: patch aiboms/status.aibom.dev"`)

	// The logs are structured (JSON) and at info level: no debug line.
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		require.True(t, strings.HasPrefix(line, "{"), "not a JSON log line: %s", line)
		require.NotContains(t, line, `"level":"debug"`)
	}
}

// aibomName waits for the one AIBOM of ns and returns its name.
func aibomName(t *testing.T, ns string) string {
	t.Helper()
	var name string
	require.Eventually(t, func() bool {
		var list v1alpha1.AIBOMList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
			return false
		}
		name = list.Items[0].Name
		return true
	}, eventually, tick, "no AIBOM in %s", ns)
	return name
}

// waitAIBOM waits until the AIBOM is Ready and cond holds.
func waitAIBOM(t *testing.T, key client.ObjectKey, cond func(*v1alpha1.AIBOM) bool, logs fmt.Stringer) *v1alpha1.AIBOM {
	t.Helper()
	var got *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		a := &v1alpha1.AIBOM{}
		if err := env.Client.Get(context.Background(), key, a); err != nil {
			return false
		}
		if !meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionReady) || !cond(a) {
			return false
		}
		got = a
		return true
	}, eventually, tick, "AIBOM %s never Ready with the expected content; logs:\n%s", key, logs)
	return got
}

// newServiceAccount creates a ServiceAccount and returns a token of it.
func newServiceAccount(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	_, err := clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	return token(t, ns, name)
}

// token requests a one-hour token of an existing ServiceAccount.
func token(t *testing.T, ns, name string) string {
	t.Helper()
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}

func ptr[T any](v T) *T { return &v }

// kubeconfigFor writes a kubeconfig that authenticates as the
// ServiceAccount with its own token (no impersonation, no admin
// credentials), as the in-cluster config of the chart's pod would.
func kubeconfigFor(t *testing.T, ns, sa string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: token(t, ns, sa)}
	cfg.Contexts["controller"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: sa}
	cfg.CurrentContext = "controller"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

// freeAddr is a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// logBuffer collects the controller's output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startController runs the controller binary until the test ends.
func startController(t *testing.T, args []string) *logBuffer {
	t.Helper()
	logs := &logBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(binaries(t), "aibom-controller"), args...)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("controller logs:\n%s", logs)
		}
	})
	return logs
}

func httpStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

type scraped struct {
	status int
	body   string
}

// scrape GETs the metrics endpoint over TLS (the controller's certificate
// is self-signed: not verified here, as a ServiceMonitor with
// insecureSkipVerify would not) with a bearer token, if any.
func scrape(t *testing.T, url, bearer string) scraped {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		return scraped{}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return scraped{resp.StatusCode, string(body)}
}

// metricSum adds the samples of a metric whose labels contain match.
func metricSum(body, name, match string) float64 {
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") || !strings.Contains(line, match) {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

func readyzVerbose(addr string) string {
	resp, err := http.Get("http://" + addr + "/readyz?verbose")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// kubectlGetColumn is what `kubectl get aibom -n ns` prints in a column for
// the namespace's one AIBOM: the API server's Table rendering of the CRD's
// printer columns, which kubectl shows as is.
func kubectlGetColumn(t *testing.T, ns, column string) string {
	t.Helper()
	body, err := clientset.Discovery().RESTClient().Get().AbsPath("/apis/aibom.dev/v1alpha1/namespaces", ns, "aiboms").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	require.NoError(t, err)
	var table metav1.Table
	require.NoError(t, json.Unmarshal(body, &table), "%s", body)
	require.Len(t, table.Rows, 1)
	for i, c := range table.ColumnDefinitions {
		if c.Name == column {
			return fmt.Sprint(table.Rows[0].Cells[i])
		}
	}
	t.Fatalf("no column %s in %v", column, table.ColumnDefinitions)
	return ""
}
