package plugin_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aibom-dev/aibom/adapters/apps/appstest"
	"github.com/aibom-dev/aibom/adapters/batch/batchtest"
	"github.com/aibom-dev/aibom/adapters/dynamo/dynamotest"
	"github.com/aibom-dev/aibom/adapters/grove/grovetest"
	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/adapters/kserve/kservetest"
	"github.com/aibom-dev/aibom/adapters/kuberay/kuberaytest"
	"github.com/aibom-dev/aibom/adapters/lws/lwstest"
	"github.com/aibom-dev/aibom/adapters/nim/nimtest"
	"github.com/aibom-dev/aibom/adapters/profiles"
	"github.com/aibom-dev/aibom/adapters/trainer/trainertest"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
	"github.com/aibom-dev/aibom/pkg/adapter/profile/profiletest"
)

// adaptersDir is the in-tree adapters' folder, from this package (the
// benchmarks read their object from it).
const adaptersDir = "../../../adapters"

// transportCase is the conformance run of one in-tree adapter: the fixtures
// and options of its own adapters/<name>/conformance_test.go, from its
// adapters/<name>/<name>test package.
type transportCase struct {
	fixtures func() ([]conformance.Fixture, error)
	opts     []conformance.Option
}

// TestConformanceOverPlugin serves every in-tree adapter through the plugin
// transport in process (gRPC service, JSON codec and Client, over an
// in-memory listener) and runs the conformance suite against the client
// side, with the fixtures, expectations and options of the adapter's own
// in-process run, from its <name>test package.
func TestConformanceOverPlugin(t *testing.T) {
	cases := transportCases()
	all := intree.All()
	for name := range cases {
		if _, ok := all[name]; !ok {
			t.Errorf("transport case %q names no in-tree adapter (known: %v)", name, intree.Names())
		}
	}
	for _, name := range intree.Names() {
		tc, ok := cases[name]
		if !ok {
			t.Errorf("in-tree adapter %q has no transport conformance case: add its adapters/%s/%stest package to transportCases", name, name, name)
			continue
		}
		a := all[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fixtures, err := tc.fixtures()
			if err != nil {
				t.Fatal(err)
			}
			var o conformance.Options
			for _, opt := range tc.opts {
				opt(&o)
			}
			if len(fixtures) == 0 && o.WalkOnly == "" {
				t.Fatalf("no fixtures for %s, which is not walk-only", name)
			}
			c, err := plugin.InProcess(a)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			if c.Name() != a.Name() {
				t.Fatalf("over the transport the adapter is named %q, in process %q", c.Name(), a.Name())
			}
			// The declarations, pod owners included, cross the wire intact.
			if got, want := c.Kinds(), a.Kinds(); !reflect.DeepEqual(got, want) {
				t.Fatalf("over the transport the adapter declares\n  %+v\nin process\n  %+v", got, want)
			}
			conformance.Run(t, conformance.NewHarness(c, fixtures...), tc.opts...)
		})
	}
}

func transportCases() map[string]transportCase {
	cases := goTransportCases()
	// Shipped profiles: their fixtures and options from
	// adapters/profiles/testdata/<name>.
	shipped, err := profiles.All()
	if err != nil {
		panic(err)
	}
	for _, p := range shipped {
		dir := filepath.Join(adaptersDir, "profiles", "testdata", p.Name())
		fixtures, opts, err := profiletest.Load(dir)
		cases[p.Name()] = transportCase{fixtures: func() ([]conformance.Fixture, error) { return fixtures, err }, opts: opts}
	}
	return cases
}

func goTransportCases() map[string]transportCase {
	return map[string]transportCase{
		"apps":    {fixtures: appstest.Fixtures},
		"batch":   {fixtures: batchtest.Fixtures},
		"dynamo":  {fixtures: dynamotest.Fixtures, opts: dynamotest.Options()},
		"grove":   {fixtures: grovetest.Fixtures, opts: grovetest.Options()},
		"kserve":  {fixtures: kservetest.Fixtures},
		"kuberay": {fixtures: kuberaytest.Fixtures},
		"lws":     {fixtures: lwstest.Fixtures},
		"nim":     {fixtures: nimtest.Fixtures},
		"trainer": {fixtures: trainertest.Fixtures},
	}
}
