package scale

import (
	"context"
	"fmt"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
)

// warmWatchCaches syncs one informer on every resource of the installed
// CRDs, and stops it, before the controller starts. On a fresh API server
// the first watch of a custom resource with initial events (an informer's
// streaming list, client-go's default) waits about a second; every later
// one is served at once. In a real cluster the operators' own informers
// paid that long before any controller of ours starts: without this, the
// harness would time a fresh control plane's warm-up as our start-up.
func warmWatchCaches(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
			wg.Go(func() {
				inf := metadatainformer.NewFilteredMetadataInformer(mc, gvr, "", 0, toolscache.Indexers{}, nil).Informer()
				ictx, stop := context.WithCancel(ctx)
				defer stop()
				go inf.RunWithContext(ictx)
				if !toolscache.WaitForCacheSync(ictx.Done(), inf.HasSynced) {
					mu.Lock()
					errs = append(errs, fmt.Errorf("warming the watch cache of %s: not synced within a minute", gvr))
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
