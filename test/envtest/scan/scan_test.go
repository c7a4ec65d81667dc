// Package scan is the envtest suite of the aibom command line: the documents
// "aibom scan" computes from a read-only snapshot of a cluster are byte for
// byte those the controller writes into status.document, for the golden
// manifests of internal/scan (a Dynamo graph, a multi-node LeaderWorkerSet, a
// NIMService, a CronJob with its Jobs), applied with real UIDs.
package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/cli"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/internal/manifest"
	"github.com/aibom-dev/aibom/internal/scan"
	"github.com/aibom-dev/aibom/internal/version"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var (
	env        *harness.Env
	controller *harness.Controller
	kubeconfig string
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	// The scan signs documents with the same tool version as the test
	// controller, so that the bytes can be compared.
	version.Version = harness.ControllerTool.Version
	var err error
	env, err = harness.StartEnv("test/crds/dynamo/v1beta1", "test/crds/grove", "test/crds/lws", "test/crds/nim")
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer env.Stop()
	controller, err = env.StartController(harness.InTreeAdapters()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest: start controller:", err)
		return 1
	}
	defer controller.Stop()
	dir, err := os.MkdirTemp("", "aibom-scan-envtest")
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "envtest: kubeconfig:", err)
		return 1
	}
	return m.Run()
}

// writeKubeconfig writes a kubeconfig for the control plane's admin user,
// so that the test runs the command line exactly as a user would.
func writeKubeconfig(path string) error {
	cfg := env.Config
	cluster := &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	user := &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientCertificate: cfg.CertFile,
		ClientKeyData: cfg.KeyData, ClientKey: cfg.KeyFile,
		Token: cfg.BearerToken, Username: cfg.Username, Password: cfg.Password,
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = cluster
	kc.AuthInfos["admin"] = user
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = "envtest"
	return clientcmd.WriteToFile(*kc, path)
}

const (
	eventually = 30 * time.Second
	tick       = 100 * time.Millisecond
)

// manifestsDir is internal/scan's golden manifests.
func manifestsDir(t *testing.T) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	return filepath.Join(root, "internal", "scan", "testdata", "manifests")
}

// newNamespace creates a fresh namespace, opted in or not.
func newNamespace(t *testing.T, optedIn bool) string {
	t.Helper()
	return env.NewNamespace(t, "s", optedIn)
}

// apply loads a golden manifest and creates its objects in ns, parent-first
// (internal/manifest.Apply fills the owner UIDs and writes pod status as a
// kubelet would).
func apply(t *testing.T, ns, file string) {
	t.Helper()
	objs, err := manifest.Load(filepath.Join(manifestsDir(t), file))
	require.NoError(t, err)
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	_, err = manifest.Apply(context.Background(), env.Client, objs)
	require.NoError(t, err)
}

// runScan runs the command line with args and returns its exit code,
// stdout and stderr.
func runScan(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), append([]string{"scan", "--kubeconfig", kubeconfig}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// readDir returns the files of an --out-dir by "<namespace>/<AIBOM name>",
// read from each document's subject, checking each file's name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		var bom struct {
			Metadata struct {
				Component struct {
					Ref string `json:"bom-ref"`
				} `json:"component"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(data, &bom))
		parts := strings.Split(strings.TrimPrefix(bom.Metadata.Component.Ref, "aibom:workload:"), "/")
		require.Len(t, parts, 3, bom.Metadata.Component.Ref)
		kind, group, _ := strings.Cut(parts[0], ".")
		name := reconcile.AIBOMName(schema.GroupKind{Group: group, Kind: kind}, parts[2])
		require.Contains(t, []string{name + ".cdx.json", parts[1] + "." + name + ".cdx.json"}, e.Name())
		out[parts[1]+"/"+name] = string(data)
	}
	return out
}

// requireSameDocuments waits until the AIBOMs in the namespaces are exactly
// those of docs ("<namespace>/<AIBOM name>" -> document) and each one's
// status.document equals its document byte for byte.
func requireSameDocuments(t *testing.T, docs map[string]string, namespaces ...string) {
	t.Helper()
	var want []string
	for name := range docs {
		want = append(want, name)
	}
	sort.Strings(want)
	var got []string
	var mismatch string
	deadline := time.Now().Add(eventually)
	for {
		got, mismatch = got[:0], ""
		for _, ns := range namespaces {
			list := &v1alpha1.AIBOMList{}
			require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
			for _, a := range list.Items {
				got = append(got, ns+"/"+a.Name)
				if d, ok := docs[ns+"/"+a.Name]; ok && d != a.Status.Document && mismatch == "" {
					mismatch = fmt.Sprintf("AIBOM %s/%s:\n--- controller (status.document)\n%s\n--- scan\n%s", ns, a.Name, a.Status.Document, d)
				}
			}
		}
		sort.Strings(got)
		if slices.Equal(want, got) && mismatch == "" {
			return
		}
		if time.Now().After(deadline) {
			require.Equal(t, want, got, "the scan's roots are the controller's AIBOMs")
			t.Fatalf("document differs from the controller's: %s", mismatch)
		}
		time.Sleep(tick)
	}
}

// Every golden manifest, in a namespace of its own: the scan of the
// namespace, from the cluster, gives the controller's documents byte for
// byte, one per AIBOM, and nothing else.
func TestScanEqualsController(t *testing.T) {
	for _, tc := range []struct {
		file  string
		roots int
	}{
		{"dynamo.yaml", 1},
		{"lws.yaml", 1},
		{"nim.yaml", 1},
		{"cronjob.json", 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ns := newNamespace(t, true)
			apply(t, ns, tc.file)
			out := t.TempDir()
			code, stdout, stderr := runScan(t, "-n", ns, "--out-dir", out, "-o", "cyclonedx-json", "--progress", "always")
			require.Equal(t, cli.ExitOK, code, stderr)
			require.Regexp(t, `(?m)^listed \d+ objects of 16 kinds$`, stderr) // 16 with the referenced NIMCache
			docs := readDir(t, out)
			require.Len(t, docs, tc.roots)
			for _, d := range docs {
				require.Equal(t, d, stdout, "one root: -o cyclonedx-json prints the document itself")
			}
			requireSameDocuments(t, docs, ns)
		})
	}
}

// The same files scanned offline (-f, into the same namespace) give the
// same table as the cluster: the same roots, runtimes, models, absorbed
// workloads and digests; only the UIDs (synthetic offline) differ.
func TestOfflineScanMatchesCluster(t *testing.T) {
	ns := newNamespace(t, true)
	files := []string{"dynamo.yaml", "lws.yaml", "nim.yaml"}
	args := []string{"scan", "-n", ns}
	for _, f := range files {
		apply(t, ns, f)
		args = append(args, "-f", filepath.Join(manifestsDir(t), f))
	}
	code, live, stderr := runScan(t, "-n", ns)
	require.Equal(t, cli.ExitOK, code, stderr)
	var offline bytes.Buffer
	code = cli.Run(context.Background(), args, &offline, &bytes.Buffer{})
	require.Equal(t, cli.ExitOK, code)
	require.Equal(t, offline.String(), live)
	require.Equal(t, 4, strings.Count(live, "\n"), "three roots")
}

// Lists are paged: with pages of two objects the snapshot, and so the
// documents, are the same.
func TestPagedLists(t *testing.T) {
	ns := newNamespace(t, true)
	apply(t, ns, "dynamo.yaml")
	defer func(n int64) { scan.PageSize = n }(scan.PageSize)
	scan.PageSize = 2
	out := t.TempDir()
	code, _, stderr := runScan(t, "-n", ns, "--out-dir", out, "--progress", "always")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Contains(t, stderr, "listed 9 objects of 16 kinds\n") // 16 with the referenced NIMCache
	require.Contains(t, stderr, "listed Pod in namespace "+ns+": 2 object(s), ")

	// Without a terminal, and without --progress always, no progress.
	code, _, stderr = runScan(t, "-n", ns)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.NotContains(t, stderr, "listed")
	requireSameDocuments(t, readDir(t, out), ns)
}

// -A reads every opted-in namespace (paging through lists), and only those
// unless --ignore-opt-in.
func TestAllNamespacesHonoursOptIn(t *testing.T) {
	in := newNamespace(t, true)
	out := newNamespace(t, false)
	apply(t, in, "nim.yaml")
	apply(t, out, "lws.yaml")

	dir := t.TempDir()
	code, _, stderr := runScan(t, "-A", "--out-dir", dir)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Contains(t, stderr, "did not opt in")
	require.Contains(t, stderr, out)
	docs := readDir(t, dir)
	// Other tests' namespaces are opted in too: compare the whole cluster.
	var opted []string
	nsList := &corev1.NamespaceList{}
	require.NoError(t, env.Client.List(context.Background(), nsList))
	for _, n := range nsList.Items {
		if n.Labels[graph.OptInLabel] == "true" {
			opted = append(opted, n.Name)
		}
	}
	requireSameDocuments(t, docs, opted...)
	require.Contains(t, docs, in+"/"+reconcile.AIBOMName(nimGK, "llama3-8b"))
	for key := range docs {
		require.False(t, strings.HasPrefix(key, out+"/"), "namespace %s did not opt in", out)
	}

	code, stdout, stderr := runScan(t, "-n", out)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Equal(t, "NAMESPACE  KIND  NAME  RUNTIME  MODELS  ABSORBED  DIGESTS\n", stdout)
	code, stdout, stderr = runScan(t, "-n", out, "--ignore-opt-in")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Contains(t, stdout, "LeaderWorkerSet  sglang-mn")
}

func TestMissingNamespaceIsAnInputError(t *testing.T) {
	code, stdout, stderr := runScan(t, "-n", "no-such-namespace")
	require.Equal(t, cli.ExitInput, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, `namespaces "no-such-namespace" not found`)
}

var nimGK = schema.GroupKind{Group: "apps.nvidia.com", Kind: "NIMService"}
