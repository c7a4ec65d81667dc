// Package adapterinfo builds the adapter registry a binary runs with, from
// the adapters it loaded (in tree, plugins, profiles), and lists it for
// people and tools: the controller's --list-adapters and the aibom CLI's
// adapter listing share it, so that a listing is a dry run of a start. It
// validates exactly what a start validates (graph.NewRegistry: a kind
// claimed twice, an adapter enabled twice, an invalid declaration) and
// fails the same way.
package adapterinfo

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
	"github.com/aibom-dev/aibom/pkg/adapter/profile"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Source says where an adapter comes from.
type Source string

// The sources of adapters.
const (
	// SourceCore marks the kinds the core declares itself (Pod).
	SourceCore Source = "core"
	// SourceInTree marks an adapter compiled into the binary.
	SourceInTree Source = "in-tree"
	// SourcePlugin marks an out-of-tree adapter served by a plugin binary.
	SourcePlugin Source = "plugin"
	// SourceProfile marks a declarative adapter loaded from a profile.
	SourceProfile Source = "profile"
)

// Loaded is one adapter as a binary loaded it.
type Loaded struct {
	Adapter adapter.Adapter
	Source  Source
	// Path is where it was loaded from: the plugin binary, the profile file
	// or resource; "" for an in-tree adapter.
	Path string
}

// InTree marks compiled-in adapters.
func InTree(adapters ...adapter.Adapter) []Loaded {
	out := make([]Loaded, 0, len(adapters))
	for _, a := range adapters {
		if p, ok := a.(*profile.Adapter); ok {
			// A shipped profile, compiled in: a profile from "embedded:<file>".
			out = append(out, Profiles(p)...)
			continue
		}
		out = append(out, Loaded{Adapter: a, Source: SourceInTree})
	}
	return out
}

// Profiles marks declarative adapters, each with where it was loaded from.
func Profiles(profiles ...*profile.Adapter) []Loaded {
	out := make([]Loaded, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, Loaded{Adapter: p, Source: SourceProfile, Path: string(p.Origin())})
	}
	return out
}

// Plugins marks plugin clients, each with its binary's path.
func Plugins(clients ...*plugin.Client) []Loaded {
	out := make([]Loaded, 0, len(clients))
	for _, c := range clients {
		out = append(out, Loaded{Adapter: c, Source: SourcePlugin, Path: c.Path()})
	}
	return out
}

// Adapters returns the adapters of loaded, in order.
func Adapters(loaded []Loaded) []adapter.Adapter {
	out := make([]adapter.Adapter, 0, len(loaded))
	for _, l := range loaded {
		out = append(out, l.Adapter)
	}
	return out
}

// Registry builds the registry of the loaded adapters, as a start does.
func Registry(loaded []Loaded) (*graph.Registry, error) {
	return graph.NewRegistry(Adapters(loaded)...)
}

// Listing is what a registry holds, by adapter.
type Listing struct {
	Adapters []Adapter `json:"adapters"`
}

// Adapter is one adapter of a listing with the kinds it registered.
type Adapter struct {
	Name   string `json:"name"`
	Source Source `json:"source"`
	Path   string `json:"path,omitempty"`
	Kinds  []Kind `json:"kinds"`
}

// Kind is one registered kind.
type Kind struct {
	// Kind is "<Kind>.<group>" ("Pod" for the core group).
	Kind     string   `json:"kind"`
	Group    string   `json:"group"`
	Resource string   `json:"resource"`
	Versions []string `json:"versions"`
	Role     string   `json:"role"`
	// ClusterScoped marks a cluster-scoped referenced kind.
	ClusterScoped bool `json:"clusterScoped,omitempty"`
	// PodOwners are the kinds that control a tracked kind's pods, each as
	// "<Kind>.<group>".
	PodOwners []string `json:"podOwners,omitempty"`
}

// List lists what reg registered, adapter by adapter: the core's own kinds
// first, then the adapters in the order loaded. Each adapter lists the
// kinds the registry holds for it, in its declaration order (a declaration
// the registry tolerates but ignores, such as an adapter's old walk-only
// Pod, is not listed).
func List(reg *graph.Registry, loaded []Loaded) Listing {
	byAdapter := map[string][]graph.Entry{}
	for _, e := range reg.AllEntries() {
		byAdapter[e.Adapter.Name()] = append(byAdapter[e.Adapter.Name()], e)
	}
	var out Listing
	add := func(name string, src Source, path string, declared []adapter.Kind) {
		entries := byAdapter[name]
		a := Adapter{Name: name, Source: src, Path: path, Kinds: []Kind{}}
		for _, d := range declared {
			i := slices.IndexFunc(entries, func(e graph.Entry) bool { return e.GroupKind() == d.GroupKind() })
			if i < 0 {
				continue
			}
			a.Kinds = append(a.Kinds, kindOf(entries[i].Kind))
		}
		out.Adapters = append(out.Adapters, a)
	}
	var coreKinds []adapter.Kind
	for _, e := range byAdapter[graph.CoreAdapterName] {
		coreKinds = append(coreKinds, e.Kind)
	}
	add(graph.CoreAdapterName, SourceCore, "", coreKinds)
	for _, l := range loaded {
		add(l.Adapter.Name(), l.Source, l.Path, l.Adapter.Kinds())
	}
	return out
}

func kindOf(k adapter.Kind) Kind {
	out := Kind{Kind: k.String(), Group: k.Group, Resource: k.Resource, Versions: slices.Clone(k.Versions), Role: string(k.Role), ClusterScoped: k.ClusterScoped}
	for _, o := range k.PodOwners {
		out.PodOwners = append(out.PodOwners, adapter.Kind{Group: o.Group, Kind: o.Kind}.String())
	}
	return out
}

// Formats of Write.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Write renders a listing as a table (FormatText: one line per kind) or as
// indented JSON (FormatJSON).
func Write(w io.Writer, l Listing, format string) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	case FormatText, "":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ADAPTER\tSOURCE\tKIND\tROLE\tVERSIONS\tPOD OWNERS\tPATH")
		for _, a := range l.Adapters {
			for _, k := range a.Kinds {
				role := k.Role
				if k.ClusterScoped {
					role += " (cluster)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Source, k.Kind, role,
					strings.Join(k.Versions, ","), dash(strings.Join(k.PodOwners, ",")), dash(a.Path))
			}
			if len(a.Kinds) == 0 {
				fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t%s\n", a.Name, a.Source, dash(a.Path))
			}
		}
		return tw.Flush()
	}
	return fmt.Errorf("unknown listing format %q (want %s or %s)", format, FormatText, FormatJSON)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
