// Command dynamo serves the in-tree dynamo adapter as a plugin, for the
// transport benchmark over a real process.
package main

import (
	"github.com/aibom-dev/aibom/adapters/dynamo"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

func main() { plugin.Serve(dynamo.New()) }
