// Command ollama is the Ollama operator adapter plugin of aibom: start the
// aibom controller (or aibom scan) with --adapter-plugin /path/to/ollama.
// Run by hand, it says what it is.
package main

import (
	"github.com/aibom-dev/aibom/examples/ollama/ollama"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

func main() { plugin.Serve(ollama.New()) }
