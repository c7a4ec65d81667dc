package reconcile

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// ReasonPodsNotAttributed is the reason of the Warning Event a root gets when
// its closure reaches pods outside the materialisation path its adapters
// declare (adapter.Kind.PodOwners).
const ReasonPodsNotAttributed = "PodsNotAttributed"

// maxUnfitNamed bounds how many unfit pods an Event names; the count is
// always exact.
const maxUnfitNamed = 10

// reportUnfitPods counts the pods a root's closure refused to attribute and
// tells the root's owner in a Warning Event: someone who can create pods in
// the namespace made pods claim a workload they do not belong to (a pod
// whose controller reference names a Deployment directly), and their
// digests are kept out of the document. The recorder folds the Events of
// one root with this reason into one series (keeping the first note), so a
// reconcile that meets the same pods again costs no new Event object.
func (r *Reconciler) reportUnfitPods(ctx context.Context, root client.Object, desc graph.Descendants) {
	if len(desc.Unfit) == 0 {
		return
	}
	for _, p := range desc.Unfit {
		podsUnattributed.WithLabelValues(p.WorkloadKind.String()).Inc()
	}
	log.FromContext(ctx).V(1).Info("pods outside their workload's declared pod owners not attributed", "count", len(desc.Unfit))
	var b strings.Builder
	fmt.Fprintf(&b, "%d pod(s) not attributed to the AIBOM: their controller is not a kind the workload runs its pods through:", len(desc.Unfit))
	for i, p := range desc.Unfit {
		if i == maxUnfitNamed {
			fmt.Fprintf(&b, " and %d more", len(desc.Unfit)-maxUnfitNamed)
			break
		}
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s pod %s (controller %s, under %s)", sep, p.Name, p.Controller.String(), p.Workload)
	}
	r.warn(root, ReasonPodsNotAttributed, "Attribute", b.String())
}
