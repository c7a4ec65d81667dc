// Package rbac runs the envtest controllers with the permissions the project
// ships and nothing more: it reads the manifests of config/rbac (the
// resources its kustomization lists) and the controller's namespace and
// ServiceAccount from config/manager, creates them on a test control plane,
// and gives a REST config that impersonates the controller's ServiceAccount.
//
// The rules are read from the repository files, never restated in Go, so
// that a permission missing from config/rbac/role.yaml fails the suites that
// use this package. Its own tests remove one permission at a time from a
// copy of the shipped ClusterRole (seed Design 005, Degradation).
package rbac

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/internal/manifest"
)

// Shipped is the RBAC of config/rbac together with the namespace of
// config/manager: what `kubectl apply -k config/default` creates apart from
// the CRD and the controller's Deployment.
type Shipped struct {
	// Namespace and ServiceAccount are the controller's, as the manager
	// Deployment names them.
	Namespace, ServiceAccount string
	// ClusterRole is the controller's ClusterRole (config/rbac/role.yaml).
	ClusterRole *rbacv1.ClusterRole
	// Extensions is the aggregated ClusterRole bound to the controller
	// (config/rbac/extensions_role.yaml): the rules of every ClusterRole
	// labelled aibom.dev/aggregate-to-controller, which plugins and
	// profiles ship. A test control plane runs no aggregation controller:
	// it grants nothing there.
	Extensions *rbacv1.ClusterRole
	// Objects are created in order by Install: the controller's Namespace,
	// then every object of config/rbac in kustomization order.
	Objects []*unstructured.Unstructured
}

// Load reads the shipped manifests from the repository.
func Load() (*Shipped, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, err
	}
	s := &Shipped{}

	// The controller's namespace and ServiceAccount, from its Deployment.
	managerObjs, err := manifest.Load(filepath.Join(root, "config", "manager", "manager.yaml"))
	if err != nil {
		return nil, err
	}
	var namespace *unstructured.Unstructured
	for _, o := range managerObjs {
		switch o.GetKind() {
		case "Namespace":
			namespace = o
		case "Deployment":
			sa, _, err := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
			if err != nil || sa == "" {
				return nil, fmt.Errorf("config/manager: Deployment %s names no serviceAccountName", o.GetName())
			}
			s.Namespace, s.ServiceAccount = o.GetNamespace(), sa
		}
	}
	if namespace == nil || s.ServiceAccount == "" || namespace.GetName() != s.Namespace {
		return nil, fmt.Errorf("config/manager: want the controller's Namespace and a Deployment in it")
	}
	s.Objects = append(s.Objects, namespace)

	// config/rbac, in the order of its kustomization.
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &kustomization); err != nil {
		return nil, fmt.Errorf("config/rbac/kustomization.yaml: %w", err)
	}
	for _, res := range kustomization.Resources {
		objs, err := manifest.Load(filepath.Join(root, "config", "rbac", res))
		if err != nil {
			return nil, err
		}
		s.Objects = append(s.Objects, objs...)
	}

	// The ServiceAccount must be shipped, and bound to a ClusterRole that is.
	var haveSA bool
	bound := map[string]bool{}
	for _, o := range s.Objects {
		switch o.GetKind() {
		case "ServiceAccount":
			haveSA = haveSA || (o.GetNamespace() == s.Namespace && o.GetName() == s.ServiceAccount)
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, b); err != nil {
				return nil, err
			}
			if slices.ContainsFunc(b.Subjects, func(sub rbacv1.Subject) bool {
				return sub.Kind == rbacv1.ServiceAccountKind && sub.Namespace == s.Namespace && sub.Name == s.ServiceAccount
			}) {
				bound[b.RoleRef.Name] = true
			}
		}
	}
	if !haveSA || len(bound) == 0 {
		return nil, fmt.Errorf("config/rbac: ServiceAccount %s/%s is not shipped or not bound to a ClusterRole", s.Namespace, s.ServiceAccount)
	}
	found := 0
	for _, o := range s.Objects {
		if o.GetKind() != "ClusterRole" || !bound[o.GetName()] {
			continue
		}
		found++
		role := &rbacv1.ClusterRole{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role); err != nil {
			return nil, err
		}
		switch {
		case role.AggregationRule != nil && s.Extensions == nil:
			s.Extensions = role
		case role.AggregationRule == nil && s.ClusterRole == nil:
			s.ClusterRole = role
		default:
			return nil, fmt.Errorf("config/rbac: want one plain and at most one aggregated ClusterRole bound to the controller, found another: %s", role.Name)
		}
	}
	if found != len(bound) || s.ClusterRole == nil {
		return nil, fmt.Errorf("config/rbac: the controller's bound ClusterRoles %v are not all shipped, or none has rules of its own", bound)
	}
	return s, nil
}

// Username is the ServiceAccount's user name, as the API server
// authenticates its token.
func (s *Shipped) Username() string {
	return "system:serviceaccount:" + s.Namespace + ":" + s.ServiceAccount
}

// Install creates the shipped objects with an administrator's client and
// waits until the API server's authorizer lets the ServiceAccount read
// AIBOMs (RBAC changes reach the authorizer through its own informers).
func (s *Shipped) Install(ctx context.Context, admin client.Client) error {
	for _, o := range s.Objects {
		if err := admin.Create(ctx, o.DeepCopy()); err != nil {
			return fmt.Errorf("create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return s.WaitAuthorized(ctx, admin, authorizationv1.ResourceAttributes{Verb: "list", Group: "aibom.dev", Resource: "aiboms"}, true)
}

// Impersonating returns a copy of admin that acts as the ServiceAccount:
// every request it makes is authorized against the shipped RBAC only.
func (s *Shipped) Impersonating(admin *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: s.Username()}
	return cfg
}

// WaitAuthorized polls a SubjectAccessReview until the authorizer's answer
// for the ServiceAccount and attrs is allowed (or 30 seconds pass).
func (s *Shipped) WaitAuthorized(ctx context.Context, admin client.Client, attrs authorizationv1.ResourceAttributes, allowed bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := s.Authorized(ctx, admin, attrs)
		if err == nil && got == allowed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s.%s for %s: want allowed=%v, got %v (%v)", attrs.Verb, attrs.Resource, attrs.Group, s.Username(), allowed, got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Authorized asks the API server whether the ServiceAccount may do attrs.
func (s *Shipped) Authorized(ctx context.Context, admin client.Client, attrs authorizationv1.ResourceAttributes) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               s.Username(),
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + s.Namespace, "system:authenticated"},
		ResourceAttributes: &attrs,
	}}
	if err := admin.Create(ctx, sar); err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// Without returns a copy of role in which the rules of group no longer grant
// resources; a rule left without resources is dropped. It fails when a
// resource is not granted by a rule of group alone, so that a renamed or
// regrouped rule in the shipped role is noticed rather than silently kept.
func Without(role *rbacv1.ClusterRole, group string, resources ...string) (*rbacv1.ClusterRole, error) {
	out := role.DeepCopy()
	out.Rules = nil
	removed := map[string]bool{}
	for _, r := range role.Rules {
		r = *r.DeepCopy()
		if slices.Contains(r.APIGroups, group) {
			for _, res := range resources {
				if !slices.Contains(r.Resources, res) {
					continue
				}
				if len(r.APIGroups) != 1 {
					return nil, fmt.Errorf("%s.%s is granted by a rule of several groups %v", res, group, r.APIGroups)
				}
				r.Resources = slices.DeleteFunc(r.Resources, func(s string) bool { return s == res })
				removed[res] = true
			}
			if len(r.Resources) == 0 {
				continue
			}
		}
		out.Rules = append(out.Rules, r)
	}
	for _, res := range resources {
		if !removed[res] {
			return nil, fmt.Errorf("%s.%s is not granted by the role %s", res, group, role.Name)
		}
	}
	return out, nil
}
