// Command nimplugin serves the in-tree nim adapter as a plugin, for the
// tests of aibom scan --adapter-plugin.
package main

import (
	"github.com/aibom-dev/aibom/adapters/nim"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

func main() { plugin.Serve(nim.New()) }
