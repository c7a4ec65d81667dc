package sinks

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/export"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

func TestExportWritesTheStoredDocumentsCheckedAgainstTheirHash(t *testing.T) {
	ctrl := startController(t, fastDelivery())
	ns := env.NewNamespace(t, "exp", true)
	digest := harness.SHA256Hex("exp")
	env.MustApply(t, ns, harness.DeploymentChain("vllm", digest))
	key := harness.AIBOMKey(ns, deploymentGK, "vllm")
	// The first document may name no running digest yet (the pod's status
	// can reach the controller after its spec): the export is compared
	// with the document that does, the last one.
	require.Eventually(t, func() bool { a, ok := getAIBOM(key); return ok && strings.Contains(a.Status.Document, digest) }, eventually, tick)
	a, _ := getAIBOM(key)

	var stdout, stderr bytes.Buffer
	res, err := export.Run(t.Context(), export.Options{Reader: env.Client, Namespace: ns, Stdout: &stdout, Stderr: &stderr})
	require.NoError(t, err)
	require.Equal(t, 1, res.Written)
	require.Equal(t, strings.TrimSuffix(a.Status.Document, "\n")+"\n", stdout.String(), "the stored bytes, not recomputed, one line")

	dir := t.TempDir()
	_, err = export.Run(t.Context(), export.Options{Reader: env.Client, Namespace: ns, OutDir: dir, Format: export.FormatXML, Stdout: &stdout, Stderr: &stderr})
	require.NoError(t, err)
	x, err := os.ReadFile(filepath.Join(dir, ns+"_"+key.Name+".cdx.xml"))
	require.NoError(t, err)
	require.Contains(t, string(x), `<bom xmlns="http://cyclonedx.org/schema/bom/1.6"`)

	// A document held by a sink: export says where. (Status written by
	// hand here; the controller writes it the same way.)
	require.NoError(t, ctrl.Stop())
	held := a.DeepCopy()
	held.Status.Document = ""
	held.Status.DocumentRef = &v1alpha1.DocumentReference{Sink: "registry", Location: "registry.example/vllm@sha256:abc", SHA256: a.Status.DocumentSHA256, Size: a.Status.DocumentSize}
	require.NoError(t, env.Client.Status().Update(t.Context(), held))
	stderr.Reset()
	stdout.Reset()
	res, err = export.Run(t.Context(), export.Options{Reader: env.Client, Namespace: ns, Stdout: &stdout, Stderr: &stderr})
	require.NoError(t, err)
	require.Equal(t, 1, res.HeldBySink)
	require.Empty(t, stdout.String())
	require.Contains(t, stderr.String(), "held by sink registry at registry.example/vllm@sha256:abc")

	// A document that does not match its hash is not written.
	forged := held.DeepCopy()
	require.NoError(t, env.Client.Get(t.Context(), key, forged))
	forged.Status.DocumentRef = nil
	forged.Status.Document = strings.Replace(a.Status.Document, "vllm", "evil", 1)
	require.NoError(t, env.Client.Status().Update(t.Context(), forged))
	stdout.Reset()
	res, err = export.Run(t.Context(), export.Options{Reader: env.Client, Namespace: ns, Stdout: &stdout, Stderr: &stderr})
	require.ErrorIs(t, err, export.ErrMismatch)
	require.Empty(t, stdout.String())
	require.Len(t, res.Mismatched, 1)
}
