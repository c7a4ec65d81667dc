package reconcile

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// The watch may deliver the echo of a write before the write's response
// returns (the create's event before Create returns, the status patch's
// before Patch returns): the echo is still recognised as the controller's
// own, and its subject is not reconciled again for nothing.
func TestEchoesOfWritesInFlightAreOwn(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	f.r.Mapper = &EventMapper{Registry: f.r.Registry, Store: f.r.Store, Reader: f.client, Written: &f.r.written}
	handler := f.r.Mapper.ForAIBOMs()
	q := newTestQueue(t)
	echoes := 0
	f.r.Writer = interceptor.NewClient(f.client.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			if a, ok := obj.(*v1alpha1.AIBOM); ok {
				echoes++
				handler.Create(ctx, event.TypedCreateEvent[*v1alpha1.AIBOM]{Object: a.DeepCopy()}, q)
			}
			return nil
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			before := &v1alpha1.AIBOM{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), before); err != nil {
				return err
			}
			if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			after := &v1alpha1.AIBOM{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), after); err != nil {
				return err
			}
			echoes++
			handler.Update(ctx, event.TypedUpdateEvent[*v1alpha1.AIBOM]{ObjectOld: before, ObjectNew: after}, q)
			return nil
		},
	})

	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Equal(t, 2, echoes, "a create and a status patch, each echoed before it returned")
	require.Equal(t, 0, q.Len(), "neither echo asks for a reconcile")

	// A status written by someone else while nothing of ours is in flight
	// is not ours: its subject is reconciled (and the status repaired).
	a := f.aibom(t)
	forged := a.DeepCopy()
	forged.Status.Summary.Runtime = "forged"
	handler.Update(ctx, event.TypedUpdateEvent[*v1alpha1.AIBOM]{ObjectOld: a, ObjectNew: forged}, q)
	require.Equal(t, 1, q.Len())
}
