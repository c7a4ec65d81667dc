package scan

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/internal/cli"
)

// runCLI runs the command line with args and returns its exit code,
// stdout and stderr.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// "aibom tree" of a cluster shows the forest the same files show offline:
// the walk and the closure run on the cluster's objects, real UIDs and all.
func TestTreeOfClusterMatchesFiles(t *testing.T) {
	ns := newNamespace(t, true)
	files := []string{"dynamo.yaml", "lws.yaml"}
	args := []string{"tree", "-n", ns}
	for _, f := range files {
		apply(t, ns, f)
		args = append(args, filepath.Join(manifestsDir(t), f))
	}
	code, live, stderr := runCLI("tree", "--kubeconfig", kubeconfig, "-n", ns)
	require.Equal(t, cli.ExitOK, code, stderr)
	code, offline, stderr := runCLI(args...)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Equal(t, offline, live)
	require.Contains(t, live, ns+"  DynamoGraphDeployment/vllm-agg ")
	require.Contains(t, live, "└─Pod/sglang-mn-0 ")
}

// A CI drift check: the folder "aibom scan --out-dir" wrote from the files
// equals the cluster (exit 0, nothing printed) until a pod runs another
// digest; then diff names the workload and the digest, and exits 1.
func TestDiffFolderAgainstCluster(t *testing.T) {
	ns := newNamespace(t, true)
	apply(t, ns, "dynamo.yaml")
	dir := t.TempDir()
	code, _, stderr := runCLI("scan", "-n", ns, "-f", filepath.Join(manifestsDir(t), "dynamo.yaml"), "--out-dir", dir)
	require.Equal(t, cli.ExitOK, code, stderr)

	code, stdout, stderr := runCLI("diff", dir, "--kubeconfig", kubeconfig, "-n", ns)
	require.Equal(t, cli.DiffSame, code, stderr)
	require.Empty(t, stdout)

	const (
		pod = "vllm-agg-vllmdecodeworker-7c9d8b6f4d-x7k2p"
		old = "sha256:8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d"
		new = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	)
	p := &unstructured.Unstructured{}
	p.SetAPIVersion("v1")
	p.SetKind("Pod")
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: pod}, p))
	statuses, _, err := unstructured.NestedSlice(p.Object, "status", "containerStatuses")
	require.NoError(t, err)
	require.Len(t, statuses, 1)
	statuses[0].(map[string]any)["imageID"] = "nvcr.io/nvidia/ai-dynamo/vllm-runtime@" + new
	require.NoError(t, unstructured.SetNestedSlice(p.Object, statuses, "status", "containerStatuses"))
	require.NoError(t, env.Client.Status().Update(context.Background(), p))

	code, stdout, stderr = runCLI("diff", dir, "--kubeconfig", kubeconfig, "-n", ns)
	require.Equal(t, cli.DiffDifferent, code, stderr)
	require.Equal(t, "~ DynamoGraphDeployment.nvidia.com "+ns+"/vllm-agg\n"+
		"  ~ digest nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1: "+old+" -> "+new+"\n", stdout)

	code, stdout, _ = runCLI("diff", dir, "--kubeconfig", kubeconfig, "-n", ns, "-o", "json")
	require.Equal(t, cli.DiffDifferent, code)
	require.True(t, strings.HasPrefix(stdout, "{\n  \"different\": true,"), stdout)
}

// -n completes the namespaces of a real API server, those the typed
// prefix names, whatever their opt-in label.
func TestNamespaceCompletionAgainstCluster(t *testing.T) {
	in, out := newNamespace(t, true), newNamespace(t, false)
	code, stdout, stderr := runCLI("__complete", "scan", "--kubeconfig", kubeconfig, "-n", "")
	require.Equal(t, cli.ExitOK, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Equal(t, ":4", lines[len(lines)-1], "no file completion")
	require.Contains(t, lines, in)
	require.Contains(t, lines, out)
	require.Contains(t, lines, "kube-system")

	code, stdout, stderr = runCLI("__complete", "export", "--kubeconfig", kubeconfig, "--namespace", in)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Equal(t, in+"\n:4\n", stdout)
}
