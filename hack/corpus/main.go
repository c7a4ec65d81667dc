// Command corpus scans every manifest of a corpus of real manifests with
// "aibom scan" and scores the runtimes and models it names against the
// corpus's expected.tsv (see internal/corpus). It exits 1 when the score over
// the kinds an enabled adapter tracks is below the targets, or when a
// manifest makes the scanner fail.
//
//	go run ./hack/corpus -dir ../shared/corpus/realworld
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/internal/cli"
	"github.com/aibom-dev/aibom/internal/corpus"
	"github.com/aibom-dev/aibom/pkg/adapter"
)

func main() {
	dir := flag.String("dir", "../shared/corpus/realworld", "Corpus folder holding expected.tsv and the manifests.")
	adapters := flag.String("adapters", "all", "Adapters to enable, as for aibom scan --adapters.")
	minRuntimes := flag.Float64("min-runtimes", 0.95, "Fail when fewer runtimes than this fraction are found, over known kinds and over all manifests.")
	minModels := flag.Float64("min-models", 0.95, "Fail when fewer models than this fraction are found, over known kinds and over all manifests.")
	flag.Parse()

	enabled, err := intree.Select(*adapters)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(2)
	}
	tracked := map[schema.GroupKind]bool{}
	for _, a := range enabled {
		for _, k := range a.Kinds() {
			// A referenced kind is known too: aibom scan reports an object
			// of it that no root uses (--unused-references).
			if k.Role == adapter.RoleTracked || k.Role == adapter.RoleReferenced {
				tracked[k.GroupKind()] = true
			}
		}
	}
	results, err := corpus.Run(context.Background(), corpus.Options{
		Dir:      *dir,
		Tracked:  func(gk schema.GroupKind) bool { return tracked[gk] },
		ScanArgs: []string{"--adapters", *adapters},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
	known, all := corpus.Report(os.Stdout, results)
	failed := false
	for _, r := range results {
		if r.Exit != cli.ExitOK {
			fmt.Fprintf(os.Stderr, "corpus: %s: aibom scan exited %d\n", r.Manifest, r.Exit)
			failed = true
		}
	}
	for _, s := range []struct {
		name  string
		score corpus.Score
	}{{"known kinds", known}, {"all manifests", all}} {
		rt, md := s.score.Ratios()
		if rt < *minRuntimes || md < *minModels {
			fmt.Fprintf(os.Stderr, "corpus: below target over %s: runtimes %.1f%% (want %.0f%%), models %.1f%% (want %.0f%%)\n",
				s.name, 100*rt, 100**minRuntimes, 100*md, 100**minModels)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
