// Command demo runs the controller end to end on a local control plane: it
// starts a real kube-apiserver and etcd (built by `make tools`), installs the
// AIBOM CRD, starts bin/aibom-controller against it, applies examples/, waits
// for the AIBOMs and prints them.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/internal/manifest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	// Minimal stand-ins for the operators' CRDs (Dynamo, Grove, LWS, NIM),
	// as a cluster running those operators would serve them.
	env, err := controlplane.New("test/crds/dynamo/v1beta1", "test/crds/grove", "test/crds/lws", "test/crds/nim")
	if err != nil {
		return err
	}
	fmt.Println("demo: starting a local control plane (kube-apiserver + etcd from bin/k8s)...")
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	defer func() {
		fmt.Println("demo: stopping the control plane")
		_ = env.Stop()
	}()

	out := filepath.Join(root, "_out", "demo")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	kubeconfig := filepath.Join(out, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logPath := filepath.Join(out, "controller.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctrl := exec.CommandContext(ctx, filepath.Join(root, "bin", "aibom-controller"),
		"--kubeconfig", kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	ctrl.Stdout, ctrl.Stderr = logFile, logFile
	if err := ctrl.Start(); err != nil {
		return fmt.Errorf("start controller (run `make build` first): %w", err)
	}
	defer func() { _ = ctrl.Process.Kill(); _ = ctrl.Wait() }()
	fmt.Printf("demo: controller running (pid %d), logs in %s\n", ctrl.Process.Pid, logPath)

	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	objs, err := manifest.Load(filepath.Join(root, "examples"))
	if err != nil {
		return err
	}
	fmt.Printf("demo: applying %d objects from examples/ (no kubelet runs here: pod status.containerStatuses, with the running digests, is set the way a kubelet would)\n", len(objs))
	if _, err := manifest.Apply(ctx, c, objs); err != nil {
		return err
	}

	fmt.Println("demo: waiting for the AIBOMs...")
	var list v1alpha1.AIBOMList
	for {
		if err := c.List(ctx, &list); err != nil {
			return err
		}
		if ready(list) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("AIBOMs not ready in time; see %s", logPath)
		case <-time.After(500 * time.Millisecond):
		}
	}
	printTable(list)
	for _, a := range list.Items {
		path := filepath.Join(out, a.Name+".cdx.json")
		if err := os.WriteFile(path, []byte(a.Status.Document), 0o644); err != nil {
			return err
		}
		if a.Spec.Subject.Kind == "DynamoGraphDeployment" {
			// status.document is compact; indent it for reading.
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, []byte(a.Status.Document), "", "  "); err != nil {
				return fmt.Errorf("the document of %s/%s is not JSON: %w", a.Namespace, a.Name, err)
			}
			fmt.Printf("\ndemo: the document of %s/%s (DynamoGraphDeployment %s, absorbing %s):\n%s\n",
				a.Namespace, a.Name, a.Spec.Subject.Name, strings.Join(a.Status.Absorbed, ", "), pretty.String())
		}
	}
	fmt.Printf("demo: documents and the controller log are in %s\n", out)
	return nil
}

// ready reports whether the examples' AIBOMs are complete: the vLLM
// Deployment's and the Dynamo graph's, with their running digests, the graph
// having absorbed its four workloads, and every AIBOM with a Ready condition.
func ready(list v1alpha1.AIBOMList) bool {
	deployment, graph := false, false
	for _, a := range list.Items {
		if meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady) == nil {
			return false
		}
		digest := strings.Contains(a.Status.Document, `"SHA-256"`)
		switch a.Spec.Subject.Kind {
		case "Deployment":
			deployment = deployment || digest
		case "DynamoGraphDeployment":
			graph = digest && len(a.Status.Absorbed) == 4
		}
	}
	return deployment && graph
}

func printTable(list v1alpha1.AIBOMList) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAMESPACE\tNAME\tSUBJECT-KIND\tSUBJECT\tRUNTIME\tMODEL\tABSORBED\tCONFIDENCE\tREADY")
	for _, a := range list.Items {
		ready := ""
		if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady); c != nil {
			ready = string(c.Status)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", a.Namespace, a.Name, a.Spec.Subject.Kind, a.Spec.Subject.Name,
			a.Status.Summary.Runtime, a.Status.Summary.Model, a.Status.AbsorbedCount, a.Status.Summary.Confidence, ready)
	}
	w.Flush()
}
