package plugin

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// A plugin built before PodOwners joined the contract sends kinds without
// it: they decode as "not declared", and the host accepts them.
func TestWireKindsWithoutPodOwnersDecodeAsUndeclared(t *testing.T) {
	const old = `{"contractVersion":1,"name":"kserve","kinds":[{"group":"serving.kserve.io","kind":"InferenceService",` +
		`"resource":"inferenceservices","versions":["v1beta1"],"role":"tracked"}]}`
	var info infoResponse
	if err := json.Unmarshal([]byte(old), &info); err != nil {
		t.Fatal(err)
	}
	kinds := fromWireKinds(info.Kinds)
	if len(kinds) != 1 || kinds[0].PodOwners != nil || kinds[0].Validate() != nil {
		t.Fatalf("decoded %+v", kinds)
	}
	if !kinds[0].AcceptsPodOwner(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}) {
		t.Errorf("an undeclared kind must accept any pod owner")
	}
}

func TestWireKindsCarryPodOwners(t *testing.T) {
	in := []adapter.Kind{{Group: "apps", Kind: "Deployment", Resource: "deployments", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}}}
	data, err := json.Marshal(toWireKinds(in))
	if err != nil {
		t.Fatal(err)
	}
	var w []wireKind
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	if got := fromWireKinds(w); !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip gave %+v, want %+v", got, in)
	}
}
