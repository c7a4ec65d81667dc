package conformance

import (
	"fmt"
	"strings"
	"sync"
)

// Recorder is a TB that keeps failures and logs in memory instead of
// reporting to go test. The zero value is ready to use. Subtests share their
// root's records.
type Recorder struct {
	name   string
	parent *Recorder
	root   *records
	once   sync.Once
	failed bool
}

// Entry is one failure or log line, with the path of the test that made it
// ("Determinism/llama"; empty for the root).
type Entry struct {
	Test    string
	Message string
}

func (e Entry) String() string {
	if e.Test == "" {
		return e.Message
	}
	return e.Test + ": " + e.Message
}

type records struct {
	mu       sync.Mutex
	failures []Entry
	logs     []Entry
	tests    []string
}

func (r *Recorder) records() *records {
	r.once.Do(func() {
		if r.root == nil {
			r.root = &records{}
		}
	})
	return r.root
}

// Helper does nothing: a Recorder has no file and line to hide.
func (r *Recorder) Helper() {}

// Errorf records a failure of this test and its parents.
func (r *Recorder) Errorf(format string, args ...any) {
	rec := r.records()
	rec.mu.Lock()
	rec.failures = append(rec.failures, Entry{Test: r.name, Message: fmt.Sprintf(format, args...)})
	for p := r; p != nil; p = p.parent {
		p.failed = true
	}
	rec.mu.Unlock()
}

// Logf records a log line.
func (r *Recorder) Logf(format string, args ...any) {
	rec := r.records()
	rec.mu.Lock()
	rec.logs = append(rec.logs, Entry{Test: r.name, Message: fmt.Sprintf(format, args...)})
	rec.mu.Unlock()
}

// Run runs f as a subtest and reports whether it passed.
func (r *Recorder) Run(name string, f func(t TB)) bool {
	rec := r.records()
	full := name
	if r.name != "" {
		full = r.name + "/" + name
	}
	child := &Recorder{name: full, parent: r, root: rec}
	child.once.Do(func() {})
	rec.mu.Lock()
	rec.tests = append(rec.tests, full)
	rec.mu.Unlock()
	f(child)
	return !child.failed
}

// Failed reports whether this test or a subtest recorded a failure.
func (r *Recorder) Failed() bool {
	rec := r.records()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return r.failed
}

// Failures returns every failure recorded, in order.
func (r *Recorder) Failures() []Entry {
	rec := r.records()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Entry(nil), rec.failures...)
}

// Logs returns every log line recorded, in order.
func (r *Recorder) Logs() []Entry {
	rec := r.records()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Entry(nil), rec.logs...)
}

// Tests returns the path of every subtest that ran, in order.
func (r *Recorder) Tests() []string {
	rec := r.records()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.tests...)
}

// Report renders the failures as text, one "--- FAIL: <test>" block each;
// "PASS" when there is none.
func (r *Recorder) Report() string {
	fs := r.Failures()
	if len(fs) == 0 {
		return "PASS\n"
	}
	var b strings.Builder
	for _, f := range fs {
		name := f.Test
		if name == "" {
			name = "<suite>"
		}
		fmt.Fprintf(&b, "--- FAIL: %s\n%s\n", name, indent(f.Message, "    "))
	}
	return b.String()
}
