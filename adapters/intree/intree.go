// Package intree lists the adapters compiled into this binary and selects
// the ones enabled by the --adapters flag.
package intree

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/adapters/dynamo"
	"github.com/aibom-dev/aibom/adapters/grove"
	"github.com/aibom-dev/aibom/adapters/kserve"
	"github.com/aibom-dev/aibom/adapters/kuberay"
	"github.com/aibom-dev/aibom/adapters/lws"
	"github.com/aibom-dev/aibom/adapters/nim"
	"github.com/aibom-dev/aibom/adapters/profiles"
	"github.com/aibom-dev/aibom/adapters/trainer"
	"github.com/aibom-dev/aibom/pkg/adapter"
)

// All returns every adapter compiled into the binary, by name: the Go
// adapters and the shipped declarative profiles (adapters/profiles).
func All() map[string]adapter.Adapter {
	out := map[string]adapter.Adapter{}
	for _, a := range []adapter.Adapter{apps.New(), batch.New(), dynamo.New(), grove.New(), kserve.New(), kuberay.New(), lws.New(), nim.New(), trainer.New()} {
		out[a.Name()] = a
	}
	shipped, err := profiles.All()
	if err != nil {
		// The profiles are embedded at build time and checked by the
		// tests: a broken one is a build defect, like a bad regexp.
		panic(err)
	}
	for _, p := range shipped {
		if _, dup := out[p.Name()]; dup {
			panic(fmt.Sprintf("shipped profile %q has the name of a Go adapter", p.Name()))
		}
		out[p.Name()] = p
	}
	return out
}

// Names returns the names of the in-tree adapters, sorted.
func Names() []string {
	var names []string
	for n := range All() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Select returns the adapters named in a comma-separated list, in the order
// of Names; "all" (or an empty list) selects every adapter. An unknown name is
// an error that lists the known ones.
func Select(list string) ([]adapter.Adapter, error) {
	all := All()
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if n != "all" {
			if _, ok := all[n]; !ok {
				return nil, fmt.Errorf("unknown adapter %q (known: %s)", n, strings.Join(Names(), ", "))
			}
		}
		want[n] = true
	}
	var out []adapter.Adapter
	for _, n := range Names() {
		if len(want) == 0 || want["all"] || want[n] {
			out = append(out, all[n])
		}
	}
	return out, nil
}
