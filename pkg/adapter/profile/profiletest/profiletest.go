// Package profiletest runs the adapter conformance suite over a declarative
// adapter with the fixtures that ship with it.
//
// A profile's fixtures live in one folder: each <name>.yaml holds the object
// to scrape as its first document and, after "---", objects of the
// profile's referenced kinds that exist when it is scraped; expect.yaml
// says what each fixture must give:
//
//	locatorRoots: [inference]          # first fields beyond spec and metadata
//	missingFixtures:
//	- {kind: Workspace.kaito.sh, version: v1alpha1, reason: same fields as v1beta1}
//	fixtures:
//	  workspace-preset:
//	    images: [...]
//	    runtimes: [{name: vllm, confidence: inferred}]
//	    models: [{name: phi-4-mini-instruct, confidence: declared}]
//	    data: [...]
//	    properties: {kaito.instanceType: Standard_NC24ads_A100_v4}
//	    imagesFromPods: [server]      # containers whose image the operator picks
//	    frameworks: [{name: lm-eval}] # evaluation and training frameworks
//	    initContainers: [downloader]  # containers reported as init containers
//	  broken:
//	    wantErr: true
//
// Every fixture file needs an entry in expect.yaml and every entry a file:
// a fixture that checks nothing, or an expectation that silently stops
// applying, is an error.
package profiletest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/profile"
)

// ExpectFile is the name of the expectations file in a fixture folder.
const ExpectFile = "expect.yaml"

// Claim is a runtime, model or data claim in expect.yaml.
type Claim struct {
	Name       string `json:"name"`
	Confidence string `json:"confidence,omitempty"`
}

// Expectation is one fixture's entry in expect.yaml.
type Expectation struct {
	Images     []string          `json:"images,omitempty"`
	Runtimes   []Claim           `json:"runtimes,omitempty"`
	Models     []Claim           `json:"models,omitempty"`
	Data       []Claim           `json:"data,omitempty"`
	Frameworks []Claim           `json:"frameworks,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	// InitContainers names containers reported as init containers.
	InitContainers []string `json:"initContainers,omitempty"`
	// ImagesFromPods names containers reported without an image, left to
	// the pods (the operator picks the image).
	ImagesFromPods []string `json:"imagesFromPods,omitempty"`
	WantErr        bool     `json:"wantErr,omitempty"`
}

// Missing excuses a tracked kind version without a fixture.
type Missing struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// Expectations is expect.yaml.
type Expectations struct {
	LocatorRoots    []string               `json:"locatorRoots,omitempty"`
	MissingFixtures []Missing              `json:"missingFixtures,omitempty"`
	Fixtures        map[string]Expectation `json:"fixtures"`
}

func claims(cs []Claim) []conformance.Claim {
	out := make([]conformance.Claim, len(cs))
	for i, c := range cs {
		out[i] = conformance.Claim{Name: c.Name, Confidence: adapter.Confidence(c.Confidence)}
	}
	return out
}

// Load reads a profile's fixture folder: the fixtures and the suite options
// expect.yaml asks for.
func Load(dir string) ([]conformance.Fixture, []conformance.Option, error) {
	data, err := os.ReadFile(filepath.Join(dir, ExpectFile))
	if err != nil {
		return nil, nil, fmt.Errorf("profiletest: %w", err)
	}
	var ex Expectations
	if err := yaml.UnmarshalStrict(data, &ex); err != nil {
		return nil, nil, fmt.Errorf("profiletest: %s: %w", filepath.Join(dir, ExpectFile), err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	used := map[string]bool{}
	var fixtures []conformance.Fixture
	for _, file := range files {
		if filepath.Base(file) == ExpectFile {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		e, ok := ex.Fixtures[name]
		if !ok {
			return nil, nil, fmt.Errorf("profiletest: %s has no entry in %s", file, ExpectFile)
		}
		used[name] = true
		objs, err := decodeAll(file)
		if err != nil {
			return nil, nil, err
		}
		if len(objs) == 0 {
			return nil, nil, fmt.Errorf("profiletest: %s holds no object", file)
		}
		fixtures = append(fixtures, conformance.Fixture{
			Name: name, Object: objs[0], References: objs[1:], WantErr: e.WantErr,
			Expect: conformance.Expect{Images: e.Images, Runtimes: claims(e.Runtimes), Models: claims(e.Models),
				Data: claims(e.Data), Frameworks: claims(e.Frameworks), Properties: e.Properties,
				ImagesFromPods: e.ImagesFromPods, InitContainers: e.InitContainers},
		})
	}
	var unknown []string
	for name := range ex.Fixtures {
		if !used[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, nil, fmt.Errorf("profiletest: %s names fixtures with no file: %q", filepath.Join(dir, ExpectFile), unknown)
	}
	var opts []conformance.Option
	for _, r := range ex.LocatorRoots {
		opts = append(opts, conformance.LocatorRoot(r))
	}
	for _, m := range ex.MissingFixtures {
		opts = append(opts, conformance.MissingFixture(m.Kind, m.Version, m.Reason))
	}
	return fixtures, opts, nil
}

func decodeAll(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufioReader(data))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("profiletest: %s: %w", file, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, err := conformance.DecodeObject(doc)
		if err != nil {
			return nil, fmt.Errorf("profiletest: %s: %w", file, err)
		}
		if obj.Object == nil {
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

// Run runs the conformance suite over a compiled profile with the fixtures
// in dir.
func Run(t *testing.T, a *profile.Adapter, dir string, opts ...conformance.Option) {
	t.Helper()
	fixtures, fopts, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.NewHarness(a, fixtures...), append(fopts, opts...)...)
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
