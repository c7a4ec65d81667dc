// Command dev is an adapter author's local loop: it starts a real
// kube-apiserver and etcd (built by `make tools`) with the AIBOM CRDs and the
// author's own CRDs, runs bin/aibom-controller against it with the author's
// --adapter-profile and --adapter-plugin, applies the author's samples into
// an opted-in namespace, prints the KUBECONFIG to use with kubectl, and
// prints the AIBOM table whenever it changes. It stays up until Ctrl-C.
//
//	make dev DEV_FLAGS='-dir ./my-operator -adapter-profile ./my-operator/profile.yaml'
//
// -dir names a folder (repeatable): its CustomResourceDefinitions are
// installed first, every other object is applied after them, in file order
// (owners before children); namespaced objects without a namespace go to
// -namespace.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/internal/manifest"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func run() error {
	var dirs, profiles, plugins, extra list
	namespace := flag.String("namespace", "dev", "Opted-in namespace the samples without a namespace go to.")
	flag.Var(&dirs, "dir", "Folder of the author's CRDs and samples (repeatable).")
	flag.Var(&profiles, "adapter-profile", "AIBOMAdapterProfile file or folder, passed to the controller (repeatable).")
	flag.Var(&plugins, "adapter-plugin", "Adapter plugin binary, PATH or PATH@sha256:<hex>, passed to the controller (repeatable).")
	binary := flag.String("controller", "", "The controller binary (default bin/aibom-controller, from make build).")
	flag.Var(&extra, "controller-arg", "Any other controller flag, e.g. -controller-arg=--adapters=apps (repeatable).")
	flag.Parse()

	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	var crdDirs []string
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		crdDirs = append(crdDirs, abs)
	}
	env, err := controlplane.New(crdDirs...)
	if err != nil {
		return err
	}
	fmt.Println("dev: starting a local control plane (kube-apiserver + etcd from bin/k8s)...")
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	defer func() {
		fmt.Println("dev: stopping the control plane")
		_ = env.Stop()
	}()
	out := filepath.Join(root, "_out", "dev")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	kubeconfig := filepath.Join(out, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logPath := filepath.Join(out, "controller.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	args := []string{"--kubeconfig", kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}
	for _, p := range profiles {
		args = append(args, "--adapter-profile", p)
	}
	for _, p := range plugins {
		args = append(args, "--adapter-plugin", p)
	}
	args = append(args, extra...)
	if *binary == "" {
		*binary = filepath.Join(root, "bin", "aibom-controller")
	}
	ctrl := exec.CommandContext(ctx, *binary, args...)
	ctrl.Stdout, ctrl.Stderr = logFile, logFile
	ctrl.Cancel = func() error { return ctrl.Process.Signal(os.Interrupt) }
	ctrl.WaitDelay = 10 * time.Second
	if err := ctrl.Start(); err != nil {
		return fmt.Errorf("start controller (run `make build` first): %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- ctrl.Wait() }()
	fmt.Printf("dev: controller running (pid %d) with %s\ndev: its log: %s\n", ctrl.Process.Pid, strings.Join(args[6:], " "), logPath)

	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *namespace, Labels: map[string]string{"aibom.dev/enabled": "true"}}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if len(dirs) > 0 {
		objs, err := manifest.Load(dirs...)
		if err != nil {
			return err
		}
		var samples []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" {
				continue // installed with the control plane
			}
			if o.GetNamespace() == "" {
				m, err := c.RESTMapper().RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
				if err != nil {
					return fmt.Errorf("%s %s: %w (is its CRD in a -dir folder?)", o.GetKind(), o.GetName(), err)
				}
				if m.Scope.Name() == meta.RESTScopeNameNamespace {
					o.SetNamespace(*namespace)
				}
			}
			samples = append(samples, o)
		}
		if _, err := manifest.Apply(ctx, c, samples); err != nil {
			return err
		}
		fmt.Printf("dev: applied %d samples (pods' status, with running digests, is written as a kubelet would)\n", len(samples))
	}
	fmt.Printf("\n  export KUBECONFIG=%s\n\nthen kubectl get aibom -A, kubectl apply -f ... ; the table below follows every change. Ctrl-C stops.\n\n", kubeconfig)

	last := ""
	for {
		var l v1alpha1.AIBOMList
		if err := c.List(ctx, &l); err == nil {
			if t := table(l); t != last {
				fmt.Printf("dev: %s\n%s\n", time.Now().Format(time.TimeOnly), t)
				last = t
			}
		}
		select {
		case <-ctx.Done():
			<-exited
			return nil
		case err := <-exited:
			if err == nil {
				err = errors.New("exited")
			}
			return fmt.Errorf("the controller stopped (%v); see %s", err, logPath)
		case <-time.After(time.Second):
		}
	}
}

func table(l v1alpha1.AIBOMList) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAMESPACE\tNAME\tSUBJECT\tRUNTIME\tMODEL\tABSORBED\tREADY\tREASON")
	for _, a := range l.Items {
		ready, reason := "", ""
		if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady); c != nil {
			ready, reason = string(c.Status), c.Reason
		}
		fmt.Fprintf(w, "%s\t%s\t%s/%s\t%s\t%s\t%d\t%s\t%s\n", a.Namespace, a.Name, a.Spec.Subject.Kind, a.Spec.Subject.Name,
			a.Status.Summary.Runtime, a.Status.Summary.Model, a.Status.AbsorbedCount, ready, reason)
	}
	_ = w.Flush()
	return b.String()
}
