package tree

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/aibom-dev/aibom/internal/scan"
)

// WriteText prints the forest as a tree, one object a line: namespace, the
// object under its controller ("├─", "└─"), its role and why. Objects
// under no root close the listing. Values from manifests are escaped
// (scan.Printable).
func WriteText(w io.Writer, f Forest) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tOBJECT\tROLE\tWHY")
	for _, r := range f.Roots {
		writeNode(tw, r, "", "")
	}
	for _, n := range f.Outside {
		writeNode(tw, n, "", "")
	}
	return tw.Flush()
}

func writeNode(w io.Writer, n *Node, prefix, childPrefix string) {
	fmt.Fprintf(w, "%s\t%s%s\t%s\t%s\n", dash(scan.Printable(n.Namespace)), prefix, scan.Printable(n.Label()), n.Role, scan.Printable(n.Why))
	for i, c := range n.Children {
		if i == len(n.Children)-1 {
			writeNode(w, c, childPrefix+"└─", childPrefix+"  ")
		} else {
			writeNode(w, c, childPrefix+"├─", childPrefix+"│ ")
		}
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteDot prints the forest as a Graphviz digraph: roots bold, absorbed workloads filled, walk-only objects
// dashed, pods as ellipses with their running digests, objects under no
// root grey. Node ids are generated; every label is escaped.
func WriteDot(w io.Writer, f Forest) error {
	var b strings.Builder
	b.WriteString("digraph aibom {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n  edge [arrowsize=0.6];\n")
	id := 0
	var emit func(n *Node) string
	emit = func(n *Node) string {
		me := fmt.Sprintf("n%d", id)
		id++
		label := n.Label()
		if n.Namespace != "" {
			label = n.Namespace + "/" + label
		}
		label += "\n" + string(n.Role)
		for _, c := range n.Containers {
			d := "pulling"
			if c.Digest != "" {
				d = shortDigest(c.Digest)
			}
			label += "\n" + c.Name + " " + d
		}
		fmt.Fprintf(&b, "  %s [label=%s%s];\n", me, dotString(label), dotStyle(n.Role))
		for _, c := range n.Children {
			child := emit(c)
			fmt.Fprintf(&b, "  %s -> %s;\n", me, child)
		}
		return me
	}
	for _, r := range f.Roots {
		emit(r)
	}
	for _, n := range f.Outside {
		emit(n)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dotStyle(r Role) string {
	switch r {
	case RoleRoot:
		return ", style=bold, penwidth=2"
	case RoleAbsorbed:
		return ", style=filled, fillcolor=\"#e8f0fe\""
	case RoleWalkOnly:
		return ", style=dashed"
	case RolePod:
		return ", shape=ellipse"
	case RoleUnattributed:
		return ", shape=ellipse, style=dashed, color=red"
	case RoleOutside:
		return ", color=grey, fontcolor=grey"
	}
	return ""
}

// dotString quotes s as a DOT string: quotes and backslashes escaped,
// line breaks as "\n", other control characters dropped, so that a name
// from a manifest cannot end the string or add attributes.
func dotString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsonNode is a node as WriteJSON prints it.
type jsonNode struct {
	Kind       string          `json:"kind"`
	Group      string          `json:"group"`
	Namespace  string          `json:"namespace,omitempty"`
	Name       string          `json:"name"`
	UID        string          `json:"uid,omitempty"`
	Role       Role            `json:"role"`
	Why        string          `json:"why"`
	Containers []jsonContainer `json:"containers,omitempty"`
	Children   []jsonNode      `json:"children"`
}

type jsonContainer struct {
	Name string `json:"name"`
	Init bool   `json:"init,omitempty"`
	// Digest is "" while the image is pulled.
	Digest string `json:"digest"`
}

func toJSON(n *Node) jsonNode {
	j := jsonNode{Kind: n.Kind.Kind, Group: n.Kind.Group, Namespace: n.Namespace, Name: n.Name, UID: string(n.UID), Role: n.Role, Why: n.Why, Children: []jsonNode{}}
	for _, c := range n.Containers {
		j.Containers = append(j.Containers, jsonContainer(c))
	}
	for _, c := range n.Children {
		j.Children = append(j.Children, toJSON(c))
	}
	return j
}

// WriteJSON prints the forest as one JSON object, indented by two spaces:
// "roots", the reported roots in the scan's order, each with its
// "children" nested under their controllers, and "outside", the objects
// under no root. A node has kind, group ("" for the core group),
// namespace, name, uid, role, why, a pod's containers (name, init, digest:
// "" while pulling) and children (always an array). Strings are JSON
// escaped, so nothing from a manifest reaches a terminal raw.
func WriteJSON(w io.Writer, f Forest) error {
	out := struct {
		Roots   []jsonNode `json:"roots"`
		Outside []jsonNode `json:"outside"`
	}{Roots: []jsonNode{}, Outside: []jsonNode{}}
	for _, r := range f.Roots {
		out.Roots = append(out.Roots, toJSON(r))
	}
	for _, n := range f.Outside {
		out.Outside = append(out.Outside, toJSON(n))
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
