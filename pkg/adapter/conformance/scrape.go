package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// result is the outcome of one guarded Scrape call.
type result struct {
	findings adapter.Findings
	err      error
	// panicked is the value Scrape panicked with, nil if it did not.
	panicked any
	stack    string
	elapsed  time.Duration
	// hung is true when Scrape had not returned Budget after its context's
	// deadline; findings and err are then zero.
	hung bool
	// fault is set when the adapter is a plugin whose adapter panicked
	// (plugin.ErrAdapterPanicked) or whose process crashed, hung past its
	// call timeout or is down (plugin.ErrFault): over the wire a panic or
	// a crash arrives as an error, and must fail like one in process.
	fault error
}

func (r result) ok() bool { return r.panicked == nil && !r.hung && r.fault == nil }

// scrape calls Scrape on obj with a context whose deadline is the budget,
// recovering a panic, and waits for it at most one more budget after the
// deadline.
func (s *suite) scrape(obj *unstructured.Unstructured) result {
	return s.scrapeWith(obj, s.resolverFor(obj, "", s.allReferences()))
}

// scrapeWith is scrape with references resolved by r.
func (s *suite) scrapeWith(obj *unstructured.Unstructured, r adapter.Resolver) result {
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Budget)
	defer cancel()
	ctx = adapter.WithResolver(ctx, r)
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{panicked: p, stack: panicFrames(string(debug.Stack()))}
			}
			r.elapsed = time.Since(start)
			done <- r
		}()
		r.findings, r.err = s.a.Scrape(ctx, obj)
		if errors.Is(r.err, plugin.ErrAdapterPanicked) || errors.Is(r.err, plugin.ErrFault) {
			r.fault = r.err
		}
	}()
	timer := time.NewTimer(2 * s.o.Budget)
	defer timer.Stop()
	select {
	case r := <-done:
		return r
	case <-timer.C:
		return result{hung: true, elapsed: time.Since(start)}
	}
}

// panicFrames keeps the frames of a stack trace from the panic on, at most
// a dozen lines, so that the report points at the adapter's line.
func panicFrames(stack string) string {
	lines := strings.Split(stack, "\n")
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") {
			start = i + 2 // the panic call and its file line
		}
	}
	if start >= len(lines) {
		start = 0
	}
	lines = lines[start:]
	// The suite's own frames say nothing about the adapter.
	for i, l := range lines {
		if strings.Contains(l, "pkg/adapter/conformance.(*suite)") {
			lines = lines[:i]
			break
		}
	}
	if len(lines) > 12 {
		lines = lines[:12]
	}
	return strings.Join(lines, "\n")
}

// describe says what went wrong in a result that is not ok, and how to fix
// it; what names the call ("fixture "x" with spec.a replaced by a string").
func (s *suite) describe(r result, what string) string {
	if r.hung {
		return fmt.Sprintf("Scrape did not return for %s: its context's deadline (%s) passed %s ago.\n"+
			"  fix: Scrape must end in bounded time on any input; check ctx.Err() in loops over object content and bound recursion.",
			what, s.o.Budget, s.o.Budget)
	}
	if r.fault != nil {
		return fmt.Sprintf("the plugin failed on %s: %v\n"+
			"  fix: a plugin's adapter must not panic, crash or hang on malformed input (adapter.Adapter); read unstructured content with "+
			"two-value type assertions or the unstructured.Nested* helpers, check ctx.Err() in loops, and return an error naming the "+
			"field's locator instead; the plugin's stderr, logged above, holds its stack",
			what, r.fault)
	}
	return fmt.Sprintf("Scrape panicked on %s: %v\n%s\n"+
		"  fix: Scrape must not panic on malformed input (adapter.Adapter); read unstructured content with two-value type "+
		"assertions or the unstructured.Nested* helpers, and return an error naming the field's locator instead.",
		what, r.panicked, indent(r.stack, "    "))
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

// marshal renders findings as indented JSON, the form documents are built
// from.
func marshal(f adapter.Findings) []byte {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return []byte(fmt.Sprintf("<unmarshalable findings: %v>", err))
	}
	return b
}

// firstDifference shows the first line where two JSON renderings differ,
// with a line of context before it.
func firstDifference(a, b []byte) string {
	la := bytes.Split(a, []byte("\n"))
	lb := bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) {
			ctx := ""
			if i > 0 && i-1 < len(la) {
				ctx = fmt.Sprintf("    line %d:   %s\n", i, strings.TrimSpace(string(la[i-1])))
			}
			return fmt.Sprintf("%s    line %d: first  %s\n    line %d: second %s",
				ctx, i+1, strings.TrimSpace(string(x)), i+1, strings.TrimSpace(string(y)))
		}
	}
	return "    (no difference)"
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// clone deep-copies an unstructured value. Unlike runtime.DeepCopyJSONValue
// it accepts any Go value (a fixture built in Go may hold an int); values
// other than maps and slices are copied as they are.
func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = clone(x)
		}
		return out
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = clone(x)
		}
		return out
	default:
		return v
	}
}

func cloneObject(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	m, _ := clone(u.Object).(map[string]any)
	return &unstructured.Unstructured{Object: m}
}

// keyOrder is an order the Determinism check inserts a map's keys in: it
// permutes the sorted keys in place.
type keyOrder struct {
	name  string
	order func(keys []string)
}

// keyOrders are the map orders of the Determinism check: sorted, reversed,
// and determinismRuns shuffles with fixed seeds (a failure reproduces).
func keyOrders() []keyOrder {
	out := []keyOrder{
		{"sorted", func([]string) {}},
		{"reverse sorted", func(keys []string) { slices.Reverse(keys) }},
	}
	for seed := uint64(1); seed <= determinismRuns; seed++ {
		out = append(out, keyOrder{fmt.Sprintf("shuffled (seed %d)", seed), func(keys []string) {
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		}})
	}
	return out
}

// reorderMaps deep-copies u, inserting the keys of every map in the order
// order gives the sorted keys.
func reorderMaps(u *unstructured.Unstructured, order func(keys []string)) *unstructured.Unstructured {
	var rebuild func(v any) any
	rebuild = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			if v == nil {
				return v
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			order(keys)
			out := make(map[string]any, len(v))
			for _, k := range keys {
				out[k] = rebuild(v[k])
			}
			return out
		case []any:
			if v == nil {
				return v
			}
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = rebuild(x)
			}
			return out
		default:
			return v
		}
	}
	m, _ := rebuild(u.Object).(map[string]any)
	return &unstructured.Unstructured{Object: m}
}
