// Command kserve is the KServe adapter plugin of aibom: start the aibom
// controller with --adapter-plugin /path/to/kserve. Run by hand, it says
// what it is.
package main

import (
	"github.com/aibom-dev/aibom/examples/kserve/kserve"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

func main() { plugin.Serve(kserve.New()) }
