package scan

import (
	"fmt"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// OpenPlugins starts the out-of-tree adapters of --adapter-plugin (in the
// order given), then those of --adapter-plugin-dir (in name order), exactly
// as the controller does. close stops every plugin process started.
func OpenPlugins(paths []string, dir string) (adapters []adapter.Adapter, close func(), err error) {
	var clients []*plugin.Client
	close = func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}
	for _, p := range paths {
		c, err := plugin.OpenArg(p)
		if err != nil {
			close()
			return nil, func() {}, fmt.Errorf("--adapter-plugin: %w", err)
		}
		clients = append(clients, c)
	}
	if dir != "" {
		cs, err := plugin.OpenDir(dir)
		if err != nil {
			close()
			return nil, func() {}, fmt.Errorf("--adapter-plugin-dir: %w", err)
		}
		clients = append(clients, cs...)
	}
	for _, c := range clients {
		adapters = append(adapters, c)
	}
	return adapters, close, nil
}
