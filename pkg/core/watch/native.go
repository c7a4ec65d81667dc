package watch

import (
	"context"
	"fmt"
	"net/http"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// A kind read whole is cached as unstructured objects (its transforms and
// the compact form work on them). Read as JSON, a watch decodes each object
// in several passes (the frame, the event, the event's kind, the object),
// and the API server encodes each by reflection. Kubernetes' own kinds
// (Pods, Deployments, StatefulSets, Jobs, ...) are served in protobuf too:
// read that way and converted, an object costs the controller about a third
// (72 against 22 us for a running Pod, BenchmarkNativeWatchDecode) and the
// API server less. Custom resources are served in JSON only, and keep the
// JSON list-watch.

// nativeListWatch lists and watches one of Kubernetes' own kinds in protobuf
// and hands the informer unstructured objects, as a JSON list-watch would,
// with the kind's apiVersion and kind set, and without the fields the kind's
// cache transform drops anyway (managed fields for every kind; see prune):
// what the transform returns is the same.
type nativeListWatch struct {
	client   rest.Interface
	resource string
	gvk      schema.GroupVersionKind
	// prune drops, from the decoded object and before its conversion, the
	// fields no cache transform of the kind keeps (prunePod, pruneStatus):
	// converting them by reflection only for the transform to drop them
	// was most of a pod's cost. Nil keeps the object whole.
	prune func(runtime.Object)
}

var (
	_ toolscache.ListerWatcher            = (*nativeListWatch)(nil)
	_ toolscache.ListerWatcherWithContext = (*nativeListWatch)(nil)
)

// NativeListWatch returns the protobuf list-watch of e, or false when e is
// not one of Kubernetes' own kinds read whole (its caches stay on JSON).
// httpClient is the client the kind's other requests use (nil: one from
// cfg).
func NativeListWatch(cfg *rest.Config, httpClient *http.Client, e graph.Entry) (toolscache.ListerWatcher, bool, error) {
	gvk := e.GVK()
	if !graph.NeedsFullObject(e) || !clientgoscheme.Scheme.Recognizes(gvk) || e.Resource == "" {
		return nil, false, nil
	}
	gv := gvk.GroupVersion()
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	var err error
	if httpClient == nil {
		if httpClient, err = rest.HTTPClientFor(c); err != nil {
			return nil, false, fmt.Errorf("protobuf client for %s: %w", e.Kind.String(), err)
		}
	}
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, false, fmt.Errorf("protobuf client for %s: %w", e.Kind.String(), err)
	}
	return &nativeListWatch{client: rc, resource: e.Resource, gvk: gvk, prune: pruneFor(e)}, true, nil
}

// pruneFor is the prune of a kind's objects: what TransformFor (and
// TransformPodFor) would drop anyway. Pods keep what TransformPodFor keeps of
// a pod read whole, whichever pod it is (whether its controller's kind is
// declared is decided by the transform, later); the other kinds read whole
// lose their status, which TransformTracked drops.
func pruneFor(e graph.Entry) func(runtime.Object) {
	if e.GroupKind() == graph.PodGroupKind {
		return prunePod
	}
	return pruneStatus
}

// prunePod empties the fields of a pod no pod transform keeps: labels, the
// spec but for the containers' podContainerKeys (env entries cut to their
// name and literal value) and the volumes, and the status but for each
// container status' containerStatusKeys. Managed fields are dropped for
// every kind, by unstructured; the rest of the metadata is kept whole: the
// transform keeps what it reads of it.
func prunePod(obj runtime.Object) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p == nil {
		return
	}
	p.Labels = nil
	p.Spec = corev1.PodSpec{
		InitContainers: pruneContainers(p.Spec.InitContainers),
		Containers:     pruneContainers(p.Spec.Containers),
		Volumes:        p.Spec.Volumes,
	}
	p.Status = corev1.PodStatus{
		InitContainerStatuses: pruneContainerStatuses(p.Status.InitContainerStatuses),
		ContainerStatuses:     pruneContainerStatuses(p.Status.ContainerStatuses),
	}
}

func pruneContainers(in []corev1.Container) []corev1.Container {
	if in == nil {
		return nil
	}
	out := make([]corev1.Container, len(in))
	for i, c := range in {
		var env []corev1.EnvVar
		if c.Env != nil {
			env = make([]corev1.EnvVar, len(c.Env))
			for j, v := range c.Env {
				env[j] = corev1.EnvVar{Name: v.Name, Value: v.Value}
			}
		}
		out[i] = corev1.Container{Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args, Env: env, Resources: c.Resources, VolumeMounts: c.VolumeMounts}
	}
	return out
}

func pruneContainerStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if in == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, s := range in {
		out[i] = corev1.ContainerStatus{Name: s.Name, Image: s.Image, ImageID: s.ImageID}
	}
	return out
}

// pruneStatus empties the status of a typed object that has one (a struct
// field named Status, as every kind of Kubernetes' own has).
func pruneStatus(obj runtime.Object) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return
	}
	if f := v.Elem().FieldByName("Status"); f.IsValid() && f.Kind() == reflect.Struct && f.CanSet() {
		f.SetZero()
	}
}

// List implements toolscache.Lister.
func (l *nativeListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

// Watch implements toolscache.Watcher.
func (l *nativeListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists every namespace's objects of the kind.
func (l *nativeListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	typed, err := l.client.Get().Resource(l.resource).VersionedParams(&opts, clientgoscheme.ParameterCodec).Do(ctx).Get()
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(typed)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", l.resource, err)
	}
	lm, err := meta.ListAccessor(typed)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", l.resource, err)
	}
	out := &unstructured.UnstructuredList{Items: make([]unstructured.Unstructured, 0, len(items))}
	out.SetGroupVersionKind(l.gvk.GroupVersion().WithKind(l.gvk.Kind + "List"))
	out.SetResourceVersion(lm.GetResourceVersion())
	out.SetContinue(lm.GetContinue())
	out.SetRemainingItemCount(lm.GetRemainingItemCount())
	for _, item := range items {
		u, err := l.unstructured(item)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *u)
	}
	return out, nil
}

// WatchWithContext watches the kind in every namespace; each event's object
// reaches the informer unstructured. An error event (a Status) passes as it
// is; an object that cannot be converted ends the watch with an error event,
// so that the informer lists again.
func (l *nativeListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	w, err := l.client.Get().Resource(l.resource).VersionedParams(&opts, clientgoscheme.ParameterCodec).Watch(ctx)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type == watch.Error {
			return ev, true
		}
		u, err := l.unstructured(ev.Object)
		if err != nil {
			return watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}, true
		}
		ev.Object = u
		return ev, true
	}), nil
}

// unstructured converts a typed object of the kind.
func (l *nativeListWatch) unstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
	}
	if l.prune != nil {
		l.prune(obj)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", l.gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(l.gvk)
	return u, nil
}
