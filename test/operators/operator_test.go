//go:build qualify

package operators

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/internal/manifest"
)

// operator describes one real operator of the qualification: where its
// module and binary are, which of its module's files install it (CRDs,
// webhook configurations) and how it runs as a local process.
type operator struct {
	// name is the directory under hack/operators and the binary under
	// bin/operators (hack/build-operators.sh builds it).
	name string
	// module is the operator's Go module; its version is the one pinned in
	// hack/operators/<name>/go.mod.
	module string
	// crds are the CRD files, globs relative to the module's root.
	crds []string
	// namespace is where the operator believes it is deployed (its
	// default when not in a pod).
	namespace string
	// webhooks is the kustomize directory (relative to the module's root)
	// of its webhook configurations; "" when it runs none.
	webhooks string
	// service is the webhook Service's name after kustomize (its
	// namePrefix applied), the name its serving certificate is for.
	service string
	// namePrefix is kustomize's prefix of the configurations' names.
	namePrefix string
	// ownCerts: the operator's certificate rotator (which cannot be
	// turned off) makes its serving certificate and injects the CA into
	// the configurations; otherwise the suite makes them.
	ownCerts bool
	// secret is the (empty) Secret an operator's rotator keeps its
	// certificates in; its manifests create it, and mount it at
	// secretDir (the suite writes its keys there, as a kubelet would).
	secret, secretDir string
	// args returns the command line; config files go into r.dir.
	args func(t testing.TB, p *process) []string
}

// process is a running operator.
type process struct {
	op      *operator
	dir     string
	port    int // the webhook server's port
	certDir string
	caPEM   []byte
	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{}
	err     error
	stop    sync.Once
	// configurations are the webhook configurations the suite created.
	configurations []*unstructured.Unstructured
}

// moduleInfo is the operator's module as the Go command resolves it inside
// hack/operators/<name>: its pinned version and where the module cache holds
// its source (the CRDs and samples of that version come from there).
type moduleInfo struct{ Version, Dir string }

var moduleInfos sync.Map // name -> moduleInfo

func (o *operator) info(t testing.TB) moduleInfo {
	t.Helper()
	if v, ok := moduleInfos.Load(o.name); ok {
		return v.(moduleInfo)
	}
	cmd := exec.Command("go", "list", "-m", "-json", o.module)
	cmd.Dir = filepath.Join(repoRoot, "hack", "operators", o.name)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	require.NoError(t, err, "go list -m %s in %s: %s", o.module, cmd.Dir, stderrOf(err))
	var m moduleInfo
	require.NoError(t, json.Unmarshal(out, &m))
	if m.Dir == "" {
		dl := exec.Command("go", "mod", "download", o.module)
		dl.Dir = cmd.Dir
		require.NoError(t, dl.Run(), "go mod download %s", o.module)
		out, err = cmd.Output()
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(out, &m))
	}
	require.NotEmpty(t, m.Dir, "module %s has no source directory", o.module)
	moduleInfos.Store(o.name, m)
	return m
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// file reads a file of the operator's module.
func (o *operator) file(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(o.info(t).Dir, rel))
	require.NoError(t, err, "%s@%s: %s", o.module, o.info(t).Version, rel)
	return data
}

// binary is the operator's executable; a missing one fails the test (run
// `make qualify`, which builds it).
func (o *operator) binary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(repoRoot, "bin", "operators", o.name)
	_, err := os.Stat(bin)
	require.NoError(t, err, "operator binary missing: run `make qualify` (hack/build-operators.sh builds it from the Go module proxy)")
	return bin
}

// installCRDs creates the operator's CRDs (or leaves those that exist) and
// waits until they are established.
func (o *operator) installCRDs(t testing.TB) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	for _, pattern := range o.crds {
		files, err := filepath.Glob(filepath.Join(o.info(t).Dir, pattern))
		require.NoError(t, err)
		require.NotEmpty(t, files, "%s@%s has no CRD file %s", o.module, o.info(t).Version, pattern)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			crd := &apiextensionsv1.CustomResourceDefinition{}
			require.NoError(t, yaml.Unmarshal(data, crd), f)
			if crd.Kind != "CustomResourceDefinition" {
				continue // a kustomization.yaml beside them
			}
			// The conversion webhooks kustomize would wire are not
			// needed: every CRD here serves one version.
			crd.Spec.Conversion = nil
			if err := env.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
				require.NoError(t, err, "create CRD %s", crd.Name)
			}
			names = append(names, crd.Name)
		}
	}
	for _, n := range names {
		require.Eventually(t, func() bool {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: n}, crd); err != nil {
				return false
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true
				}
			}
			return false
		}, eventually, tick, "CRD %s established", n)
	}
	return names
}

// start runs the operator against the control plane as a system:masters
// user (as kube-controller-manager runs) and, when it serves webhooks,
// registers its webhook configurations, reaching it on 127.0.0.1 through
// an ExternalName Service of the name its certificate is for. The process
// is stopped, and the configurations deleted, at the end of the test.
func (o *operator) start(t testing.TB) *process {
	t.Helper()
	ctx := context.Background()
	bin := o.binary(t)
	dir := t.TempDir()
	p := &process{op: o, dir: dir, certDir: filepath.Join(dir, "certs"), done: make(chan struct{})}
	var err error
	p.port, err = freePort()
	require.NoError(t, err)
	ensureNamespace(t, o.namespace)
	if o.webhooks != "" {
		if !o.ownCerts {
			p.caPEM = writeServingCert(t, p.certDir, o.service+"."+o.namespace+".svc")
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: o.service, Namespace: o.namespace},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
				Ports: []corev1.ServicePort{{Name: "webhook", Port: int32(p.port)}}},
		}
		_ = env.Client.Delete(ctx, svc)
		require.Eventually(t, func() bool {
			err := env.Client.Create(ctx, svc.DeepCopy())
			return err == nil
		}, eventually, tick, "webhook Service %s/%s", o.namespace, o.service)
		p.configurations = o.webhookConfigurations(t, p)
		if o.secret != "" {
			err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: o.secret, Namespace: o.namespace}})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				require.NoError(t, err)
			}
		}
	}
	kubeconfig := writeKubeconfig(t, dir, "aibom-qualify:"+o.name)
	logPath := filepath.Join(dir, o.name+".log")
	p.log, err = os.Create(logPath)
	require.NoError(t, err)
	p.cmd = exec.Command(bin, o.args(t, p)...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	require.NoError(t, p.cmd.Start(), "start %s", bin)
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			kept := filepath.Join(os.TempDir(), "aibom-qualify-"+o.name+".log")
			if data, err := os.ReadFile(logPath); err == nil && os.WriteFile(kept, data, 0o600) == nil {
				t.Logf("%s log: %s", o.name, kept)
			}
			t.Logf("%s log (last 6000 bytes):\n%s", o.name, p.tail(6000))
		}
	})
	for _, c := range p.configurations {
		require.NoError(t, env.Client.Create(ctx, c), "webhook configuration %s", c.GetName())
	}
	if o.secret != "" {
		go p.mountSecret(t)
	}
	if o.webhooks != "" {
		p.waitServing(t)
	}
	return p
}

// webhookConfigurations builds the operator's webhook configurations as its
// kustomize directory does (the resources with their JSON patches, the
// name prefix), pointed at the Service of the suite; with the suite's CA
// unless the operator injects its own.
func (o *operator) webhookConfigurations(t testing.TB, p *process) []*unstructured.Unstructured {
	t.Helper()
	var k struct {
		Resources []string `json:"resources"`
		Patches   []struct {
			Path   string `json:"path"`
			Target struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"target"`
		} `json:"patches"`
	}
	require.NoError(t, yaml.Unmarshal(o.file(t, filepath.Join(o.webhooks, "kustomization.yaml")), &k))
	var out []*unstructured.Unstructured
	for _, r := range k.Resources {
		objs, err := manifest.Decode(r, o.file(t, filepath.Join(o.webhooks, r)))
		require.NoError(t, err)
		for _, obj := range objs {
			if !strings.HasSuffix(obj.GetKind(), "WebhookConfiguration") {
				continue // the Service: the suite makes its own
			}
			for _, pt := range k.Patches {
				if pt.Target.Kind != obj.GetKind() || (pt.Target.Name != "" && pt.Target.Name != obj.GetName()) {
					continue
				}
				patchJSON, err := yaml.YAMLToJSON(o.file(t, filepath.Join(o.webhooks, pt.Path)))
				require.NoError(t, err)
				patch, err := jsonpatch.DecodePatch(patchJSON)
				require.NoError(t, err, "patch %s", pt.Path)
				doc, err := json.Marshal(obj.Object)
				require.NoError(t, err)
				doc, err = patch.Apply(doc)
				require.NoError(t, err, "patch %s onto %s", pt.Path, obj.GetName())
				obj.Object = map[string]any{}
				require.NoError(t, json.Unmarshal(doc, &obj.Object))
			}
			if !strings.HasPrefix(obj.GetName(), o.namePrefix) {
				obj.SetName(o.namePrefix + obj.GetName())
			}
			hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
			for i := range hooks {
				h := hooks[i].(map[string]any)
				cc, _ := h["clientConfig"].(map[string]any)
				svc, _ := cc["service"].(map[string]any)
				require.NotNil(t, svc, "webhook %v of %s has no service", h["name"], obj.GetName())
				svc["name"], svc["namespace"], svc["port"] = o.service, o.namespace, int64(p.port)
				if p.caPEM != nil {
					cc["caBundle"] = base64.StdEncoding.EncodeToString(p.caPEM)
				}
			}
			require.NoError(t, unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"))
			// A configuration left by an earlier run of the operator.
			_ = env.Client.Delete(context.Background(), obj.DeepCopy())
			out = append(out, obj)
		}
	}
	return out
}

// waitServing waits until the webhook server accepts TLS connections.
func (p *process) waitServing(t testing.TB) {
	t.Helper()
	require.Eventually(t, func() bool {
		select {
		case <-p.done:
			require.FailNow(t, "operator exited", "%s exited before serving its webhooks: %v\n%s", p.op.name, p.err, p.tail(4000))
		default:
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p.port), time.Second)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	}, 2*eventually, tick, "%s serves its webhooks on 127.0.0.1:%d", p.op.name, p.port)
}

// Running reports whether the process is still running.
func (p *process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Stop ends the operator (SIGTERM, then SIGKILL) and deletes its webhook
// configurations, so that no admission request waits on a stopped server.
func (p *process) Stop() {
	p.stop.Do(func() {
		for _, c := range p.configurations {
			_ = env.Client.Delete(context.Background(), c)
		}
		if p.cmd.Process != nil {
			_ = p.cmd.Process.Signal(os.Interrupt)
			select {
			case <-p.done:
			case <-time.After(15 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
		_ = p.log.Close()
	})
}

// tail returns the operator's error lines (the first 20) and the last n
// bytes of its log.
func (p *process) tail(n int) string {
	data, _ := os.ReadFile(p.log.Name())
	var errs []string
	for _, l := range strings.Split(string(data), "\n") {
		if len(errs) < 20 && (strings.Contains(l, `"level":"error"`) || strings.Contains(l, "\tERROR\t") || strings.HasPrefix(l, "E1") || strings.Contains(l, "panic")) {
			errs = append(errs, l)
		}
	}
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return "errors:\n" + strings.Join(errs, "\n") + "\n...\n" + string(data)
}

// writeKubeconfig writes the kubeconfig of a system:masters user of the
// control plane.
func writeKubeconfig(t testing.TB, dir, user string) string {
	t.Helper()
	u, err := env.Env.ControlPlane.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	require.NoError(t, err)
	kc, err := u.KubeConfig()
	require.NoError(t, err)
	path := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(path, kc, 0o600))
	return path
}

// writeServingCert writes tls.crt and tls.key for dnsName (and localhost,
// 127.0.0.1) signed by a fresh CA into dir and returns the CA's PEM.
func writeServingCert(t testing.TB, dir, dnsName string) []byte {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aibom-qualify-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{dnsName, "localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

func ensureNamespace(t testing.TB, name string) {
	t.Helper()
	err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeFile writes a config file into the process's directory.
func (p *process) writeFile(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// samples reads YAML files of the operator's module (paths relative to its
// root) as objects, in order.
func (o *operator) samples(t testing.TB, paths ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, rel := range paths {
		objs, err := manifest.Decode(o.module+"@"+o.info(t).Version+"/"+rel, bytes.TrimSpace(o.file(t, rel)))
		require.NoError(t, err)
		out = append(out, objs...)
	}
	return out
}

// mountSecret writes the keys of the operator's certificate Secret as files
// into its secretDir whenever they change, as the kubelet updates a
// mounted Secret, until the process ends.
func (p *process) mountSecret(t testing.TB) {
	o := p.op
	written := map[string]string{}
	for p.Running() {
		sec := &corev1.Secret{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: o.namespace, Name: o.secret}, sec); err == nil {
			for k, v := range sec.Data {
				if written[k] == string(v) {
					continue
				}
				if err := os.MkdirAll(o.secretDir, 0o700); err != nil {
					t.Errorf("mount %s: %v", o.secret, err)
					return
				}
				tmp := filepath.Join(o.secretDir, "."+k+".tmp")
				if err := os.WriteFile(tmp, v, 0o600); err == nil && os.Rename(tmp, filepath.Join(o.secretDir, k)) == nil {
					written[k] = string(v)
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}
