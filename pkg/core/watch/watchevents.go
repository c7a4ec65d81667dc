package watch

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Events is where the Supervisor sends what its informers see. In the
// controller it is the reconcile loop's event feed: the event mapper bound
// to the controller's queue. The supervisor never reconciles anything
// itself; it only says which objects changed, were replayed or became
// readable.
type Events interface {
	// Handler returns the event handler of one kind's informer.
	Handler(ctx context.Context, e graph.Entry) toolscache.ResourceEventHandler
	// Replay re-evaluates the cached objects of a kind as if each had just
	// been created, and, for a tracked kind, the subject of every AIBOM of
	// that kind (whose workload may have gone while nothing watched it).
	Replay(ctx context.Context, e graph.Entry, objs []client.Object)
	// Reconcile asks for the reconcile of one tracked workload.
	Reconcile(gk schema.GroupKind, namespace, name string)
	// NamespaceChanged re-evaluates every workload and AIBOM of a namespace
	// whose opt-in changed, once the caches follow the change.
	NamespaceChanged(namespace string)
	// Leading reports whether anything receives the requests (this replica
	// leads); before that, replays are skipped: ReplayAll runs when it
	// starts leading.
	Leading() bool
}
