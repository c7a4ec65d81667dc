package scale

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// Verdict says why an AIBOM is not (yet) what its root needs; "" when it is.
func Verdict(root Root, uid types.UID, a *v1alpha1.AIBOM) string {
	if a.Spec.Subject.UID != string(uid) || a.Spec.Subject.Name != root.Name || a.Spec.Subject.Kind != root.GroupKind.Kind {
		return fmt.Sprintf("subject %s/%s %s, want %s/%s %s", a.Spec.Subject.Kind, a.Spec.Subject.Name, a.Spec.Subject.UID, root.GroupKind.Kind, root.Name, uid)
	}
	if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		return "not Ready"
	}
	absorbed := append([]string(nil), a.Status.Absorbed...)
	sort.Strings(absorbed)
	if a.Status.AbsorbedCount != len(root.Absorbed) || !slices.Equal(absorbed, root.Absorbed) {
		return fmt.Sprintf("absorbed %d %v, want %d %v", a.Status.AbsorbedCount, absorbed, len(root.Absorbed), root.Absorbed)
	}
	var doc struct {
		Components []struct {
			Type   string `json:"type"`
			Name   string `json:"name"`
			Hashes []struct {
				Alg     string `json:"alg"`
				Content string `json:"content"`
			} `json:"hashes"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(a.Status.Document), &doc); err != nil {
		return "document: " + err.Error()
	}
	got := map[string]bool{}
	containers := 0
	for _, c := range doc.Components {
		if c.Type != "container" {
			continue
		}
		containers++
		resolved := false
		for _, h := range c.Hashes {
			if h.Alg == "SHA-256" {
				got[h.Content] = true
				resolved = true
			}
		}
		if !resolved {
			return "container " + c.Name + ": digest unresolved"
		}
	}
	if containers == 0 {
		return "no container in the document"
	}
	var digests []string
	for d := range got {
		digests = append(digests, d)
	}
	sort.Strings(digests)
	if !slices.Equal(digests, root.Digests) {
		return fmt.Sprintf("digests %v, want %v", digests, root.Digests)
	}
	return ""
}

type key struct{ namespace, name string }

// tracker follows the AIBOMs through a watch and records when the set first
// became exactly the expected one.
type tracker struct {
	mu      sync.Mutex
	roots   map[key]Root
	uids    map[key]types.UID // root UID by AIBOM key
	reasons map[key]string    // expected AIBOMs that are missing or wrong
	extra   map[key]bool      // AIBOMs of no root
	present map[key]bool      // AIBOMs that exist
	start   time.Time
	firstAt time.Duration // the first AIBOM seen; 0 until then
	doneAt  time.Duration
	done    chan struct{}
	closed  bool
}

func newTracker(load Load, uids map[key]types.UID) *tracker {
	t := &tracker{roots: map[key]Root{}, uids: uids, reasons: map[key]string{}, extra: map[key]bool{}, present: map[key]bool{}, done: make(chan struct{})}
	for _, c := range load.Chains {
		k := key{c.Namespace, c.Root.AIBOMName()}
		t.roots[k] = c.Root
		t.reasons[k] = "missing"
	}
	return t
}

func (t *tracker) begin(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start = at
}

// rearm starts a new convergence (Options.Rounds): the first AIBOM and the
// exact set are timed again from the next begin.
func (t *tracker) rearm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start, t.firstAt, t.doneAt = time.Time{}, 0, 0
	t.done, t.closed = make(chan struct{}), false
}

// convergedAt is when the set first became the expected one, from begin.
func (t *tracker) convergedAt() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.doneAt
}

func (t *tracker) observe(a *v1alpha1.AIBOM) {
	k := key{a.Namespace, a.Name}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.firstAt == 0 && !t.start.IsZero() {
		t.firstAt = time.Since(t.start)
	}
	t.present[k] = true
	root, ok := t.roots[k]
	if !ok {
		t.extra[k] = true
		return
	}
	if why := Verdict(root, t.uids[k], a); why != "" {
		t.reasons[k] = why
	} else {
		delete(t.reasons, k)
	}
	t.check()
}

func (t *tracker) forget(a *v1alpha1.AIBOM) {
	k := key{a.Namespace, a.Name}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.present, k)
	if _, ok := t.roots[k]; ok {
		t.reasons[k] = "deleted"
	} else {
		delete(t.extra, k)
	}
	t.check()
}

// expect adds the chains of a namespace to the expectation (on), or
// removes them (an AIBOM of theirs is then extra).
func (t *tracker) expect(load Load, ns string, on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range load.Chains {
		if c.Namespace != ns {
			continue
		}
		k := key{ns, c.Root.AIBOMName()}
		if on {
			t.roots[k] = c.Root
			t.reasons[k] = "missing"
			delete(t.extra, k)
			continue
		}
		delete(t.roots, k)
		delete(t.reasons, k)
		if t.present[k] {
			t.extra[k] = true
		}
	}
}

// presentCount is how many AIBOMs the tracker's watch holds.
func (t *tracker) presentCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.present)
}

func (t *tracker) check() {
	if len(t.reasons) == 0 && len(t.extra) == 0 && !t.closed {
		t.doneAt = time.Since(t.start)
		t.closed = true
		close(t.done)
	}
}

// state returns whether the set is exactly the expected one now, and a few
// reasons why not.
func (t *tracker) state(maxReasons int) (ok bool, wrong, extra int, reasons []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, why := range t.reasons {
		if len(reasons) < maxReasons {
			reasons = append(reasons, k.namespace+"/"+k.name+": "+why)
		}
	}
	for k := range t.extra {
		if len(reasons) < maxReasons {
			reasons = append(reasons, k.namespace+"/"+k.name+": AIBOM of no root")
		}
	}
	sort.Strings(reasons)
	return len(t.reasons) == 0 && len(t.extra) == 0, len(t.reasons), len(t.extra), reasons
}
