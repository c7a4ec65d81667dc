package scale

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Report is what a run measured. Request maps are keyed "VERB resource"
// (from aibom_api_requests_total: VERB is the HTTP method, or WATCH; a list
// is a GET of the collection).
type Report struct {
	Machine   Machine   `json:"machine"`
	Load      LoadStats `json:"load"`
	ColdStart ColdStart `json:"coldStart"`
	Steady    Steady    `json:"steady"`
	Quiet     Quiet     `json:"quiet"`
	Memory    Memory    `json:"memory"`
	// CorrectAtEnd: the AIBOM set was still exactly the expected one after
	// the steady state.
	CorrectAtEnd bool    `json:"correctAtEnd"`
	Replay       *Replay `json:"replay,omitempty"`
	// Rounds are the cold starts and their replays (Options.Rounds), the
	// first being ColdStart and Replay; RatioMedian is the median of their
	// ratios.
	Rounds      []Round `json:"rounds,omitempty"`
	RatioMedian float64 `json:"ratioMedian,omitempty"`
	Toggle      *Toggle `json:"toggle,omitempty"`
}

// APIServerLatency is the API server's own view of the AIBOM writes in a
// phase: apiserver_request_duration_seconds of POST and PATCH on aiboms,
// interpolated inside its buckets, and the requests priority and fairness
// rejected (apiserver_flowcontrol_rejected_requests_total, every flow).
type APIServerLatency struct {
	Writes   int     `json:"writes"`
	P50      float64 `json:"p50Seconds"`
	P99      float64 `json:"p99Seconds"`
	Rejected int     `json:"rejected"`
}

func (l *APIServerLatency) String() string {
	if l == nil {
		return "n/a"
	}
	return fmt.Sprintf("%d writes, p50 %.1f ms, p99 %.1f ms, %d rejected by priority and fairness", l.Writes, l.P50*1000, l.P99*1000, l.Rejected)
}

// Toggle is one namespace opted out, then in again.
type Toggle struct {
	Namespace string `json:"namespace"`
	Roots     int    `json:"roots"`
	Objects   int    `json:"objects"`
	// LiveHeap* are go_memstats_heap_alloc_bytes right after a forced GC.
	LiveHeapBefore   int64          `json:"liveHeapBeforeBytes"`
	OptOutSeconds    float64        `json:"optOutSeconds"`
	OptOutRequests   map[string]int `json:"optOutRequests"`
	LiveHeapOptedOut int64          `json:"liveHeapOptedOutBytes"`
	OptInSeconds     float64        `json:"optInSeconds"`
	OptInRequests    map[string]int `json:"optInRequests"`
	LiveHeapAfter    int64          `json:"liveHeapAfterBytes"`
	// Cached* are the objects in the controller's caches
	// (aibom_cached_objects, every kind).
	CachedBefore   int `json:"cachedBefore"`
	CachedOptedOut int `json:"cachedOptedOut"`
	CachedAfter    int `json:"cachedAfter"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs             int    `json:"cpus"`
	GoVersion        string `json:"goVersion"`
	LoadAverageStart string `json:"loadAverageStart"`
	LoadAverageEnd   string `json:"loadAverageEnd"`
}

// LoadStats describes the load and how long the API server took to take it.
type LoadStats struct {
	Mode              string `json:"mode"`
	Namespaces        int    `json:"namespaces"`
	OptedInNamespaces int    `json:"optedInNamespaces"`
	Objects           int    `json:"objects"`
	// OptedInObjects are the objects in opted-in namespaces.
	OptedInObjects int            `json:"optedInObjects"`
	PodStatuses    int            `json:"podStatuses"`
	Roots          int            `json:"roots"`
	RootsByShape   map[string]int `json:"rootsByShape"`
	ObjectsByKind  map[string]int `json:"objectsByKind"`
	// Absorbed is the number of tracked workloads absorbed into roots.
	Absorbed        int     `json:"absorbed"`
	Writers         int     `json:"writers"`
	Writes          int     `json:"writes"`
	Seconds         float64 `json:"seconds"`
	WritesPerSecond float64 `json:"writesPerSecond"`
}

// Latency is a reconcile-time distribution, interpolated inside the
// buckets of controller_runtime_reconcile_time_seconds.
type Latency struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50Seconds"`
	P99   float64 `json:"p99Seconds"`
}

// ColdStart is from the controller's start until it settled after every
// AIBOM was correct.
type ColdStart struct {
	ReadySeconds     float64 `json:"readySeconds"`
	ConvergedSeconds float64 `json:"convergedSeconds"`
	// FirstAIBOMSeconds is when the first AIBOM was seen (its create's
	// watch event): the start-up share of ConvergedSeconds.
	FirstAIBOMSeconds float64        `json:"firstAIBOMSeconds"`
	Requests          map[string]int `json:"requests"`
	Total             int            `json:"total"`
	Writes            int            `json:"writes"`
	RequestsPerRoot   float64        `json:"requestsPerRoot"`
	WritesPerRoot     float64        `json:"writesPerRoot"`
	// Transient counts AIBOMs deleted during the cold start: written for a
	// workload that turned out to be absorbed.
	Transient  int            `json:"transient"`
	Reconciles int            `json:"reconciles"`
	Outcomes   map[string]int `json:"outcomes"`
	Latency    Latency        `json:"latency"`
	// Watches counts the watches opened.
	Watches int `json:"watches"`
	// APIServer is the API server's latency for the AIBOM writes until
	// every AIBOM was correct.
	APIServer *APIServerLatency `json:"apiServer,omitempty"`
	// CPUSeconds is the controller's CPU time (user and system,
	// process_cpu_seconds_total) from its start until it settled after the
	// cold start; CPUPerRootMillis divides it by the roots.
	CPUSeconds       float64 `json:"cpuSeconds"`
	CPUPerRootMillis float64 `json:"cpuPerRootMillis"`
	// CPU is the machine's CPU from the controller's start until every
	// AIBOM was correct, by process: the API server, etcd, the controller
	// and this harness share the cores.
	CPU *CPUUse `json:"cpu,omitempty"`
}

func (c *ColdStart) summarise(roots int) {
	for _, v := range c.Requests {
		c.Total += v
	}
	c.Writes = countWrites(c.Requests)
	c.Transient = c.Requests["DELETE aiboms"]
	if roots > 0 {
		c.RequestsPerRoot = float64(c.Total) / float64(roots)
		c.WritesPerRoot = float64(c.Writes) / float64(roots)
		c.CPUPerRootMillis = 1000 * c.CPUSeconds / float64(roots)
	}
}

// Steady is the annotation pass: every root annotated once, until the
// controller settled.
type Steady struct {
	Annotated       int            `json:"annotated"`
	AnnotateSeconds float64        `json:"annotateSeconds"`
	Requests        map[string]int `json:"requests"`
	Writes          int            `json:"writes"`
	Reconciles      int            `json:"reconciles"`
	Outcomes        map[string]int `json:"outcomes"`
	Latency         Latency        `json:"latency"`
	// CPUSeconds is the controller's CPU time for the pass.
	CPUSeconds float64 `json:"cpuSeconds"`
}

// Quiet is the period after the annotation pass with no change at all.
type Quiet struct {
	Seconds    float64        `json:"seconds"`
	Requests   map[string]int `json:"requests"`
	Writes     int            `json:"writes"`
	Reconciles int            `json:"reconciles"`
	// ResyncPasses and ResyncEnqueued count the periodic re-verification
	// passes in the period and the workloads they enqueued.
	ResyncPasses   int `json:"resyncPasses"`
	ResyncEnqueued int `json:"resyncEnqueued"`
	// CPUSeconds is the controller's CPU time in the period.
	CPUSeconds float64 `json:"cpuSeconds"`
}

// Memory is the controller's resident set, from /proc/<pid>/status.
type Memory struct {
	// PeakRSS is VmHWM at the end of the run.
	PeakRSS int64 `json:"peakRSSBytes"`
	// RSSAtConvergence is VmRSS when every AIBOM was first correct.
	RSSAtConvergence int64 `json:"rssAtConvergenceBytes"`
	// RSSAtEnd is VmRSS at the end of the run.
	RSSAtEnd int64 `json:"rssAtEndBytes"`
	// HeapInuseSettled and HeapInuseAtEnd are the Go heap in use
	// (go_memstats_heap_inuse_bytes) once the cold start settled and at the
	// end: the live objects plus fragmentation, without the garbage the GC
	// lets accumulate up to GOGC.
	HeapInuseSettled int64 `json:"heapInuseSettledBytes"`
	HeapInuseAtEnd   int64 `json:"heapInuseAtEndBytes"`
	// GoMemLimit and GoGC are the controller's GOMEMLIMIT and GOGC ("":
	// the runtime's defaults, no limit and 100).
	GoMemLimit string `json:"goMemLimit,omitempty"`
	GoGC       string `json:"goGC,omitempty"`
}

// Replay is the API server's own time for the controller's cold-start
// writes, re-issued by the harness.
type Replay struct {
	Writes          int     `json:"writes"`
	Writers         int     `json:"writers"`
	Seconds         float64 `json:"seconds"`
	WritesPerSecond float64 `json:"writesPerSecond"`
	// OriginalsDeleted is how many of the controller's AIBOMs were deleted
	// (and gone from the API server's lists) before the replay started, so
	// that the API server replays from the cold start's state.
	OriginalsDeleted int `json:"originalsDeleted"`
	// APIServer is the API server's latency for the replayed writes.
	APIServer *APIServerLatency `json:"apiServer,omitempty"`
	// CPU is the machine's CPU during the replay, by process.
	CPU *CPUUse `json:"cpu,omitempty"`
}

// fillLoad describes the whole load and, in it, what opted in (expected).
func (r *Report) fillLoad(l, expected Load, opts Options) {
	r.Load.Namespaces = len(l.Namespaces)
	r.Load.OptedInNamespaces = len(expected.Namespaces)
	r.Load.Objects = l.Objects()
	r.Load.OptedInObjects = expected.Objects()
	r.Load.PodStatuses = l.Statuses()
	r.Load.Roots = len(expected.Chains)
	r.Load.RootsByShape = expected.RootsByShape()
	r.Load.ObjectsByKind = l.ObjectsByKind()
	r.Load.Writers = opts.Writers
	r.Memory.GoMemLimit, r.Memory.GoGC = opts.GoMemLimit, opts.GoGC
	for _, c := range expected.Chains {
		r.Load.Absorbed += len(c.Root.Absorbed)
	}
}

// WriteMarkdown prints the report as markdown tables.
func (r Report) WriteMarkdown(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("## Scale run: %s load", r.Load.Mode)
	p("")
	p("Machine: %d CPUs, %s, load average %s at the start, %s at the end.", r.Machine.CPUs, r.Machine.GoVersion, r.Machine.LoadAverageStart, r.Machine.LoadAverageEnd)
	p("")
	p("| load | value |")
	p("|---|---|")
	p("| namespaces / opted in | %d / %d |", r.Load.Namespaces, r.Load.OptedInNamespaces)
	p("| objects / in opted-in namespaces | %d / %d (%s) |", r.Load.Objects, r.Load.OptedInObjects, counts(r.Load.ObjectsByKind))
	p("| pod statuses | %d |", r.Load.PodStatuses)
	p("| roots (expected AIBOMs) | %d (%s) |", r.Load.Roots, counts(r.Load.RootsByShape))
	p("| tracked workloads absorbed | %d |", r.Load.Absorbed)
	p("| load writes (creates + statuses) | %d in %.2f s with %d writers: %.0f writes/s |", r.Load.Writes, r.Load.Seconds, r.Load.Writers, r.Load.WritesPerSecond)
	p("")
	p("| controller | value |")
	p("|---|---|")
	p("| ready (/readyz) after start | %.2f s |", r.ColdStart.ReadySeconds)
	p("| first AIBOM seen after start | %.2f s |", r.ColdStart.FirstAIBOMSeconds)
	p("| every AIBOM correct after start | %.2f s |", r.ColdStart.ConvergedSeconds)
	if r.Replay != nil {
		p("| API server's own time for the controller's %d cold-start writes (replayed, %d writers, its %d AIBOMs deleted first) | %.2f s (%.0f writes/s); convergence / replay = %.2f× |",
			r.Replay.Writes, r.Replay.Writers, r.Replay.OriginalsDeleted, r.Replay.Seconds, r.Replay.WritesPerSecond, r.ColdStart.ConvergedSeconds/r.Replay.Seconds)
	}
	if len(r.Rounds) > 1 {
		parts := make([]string, len(r.Rounds))
		for i, rd := range r.Rounds {
			parts[i] = fmt.Sprintf("%.2f s / %.2f s = %.2f×", rd.ConvergedSeconds, rd.ReplaySeconds, rd.Ratio)
			if rd.ColdCPU != nil && rd.ReplayCPU != nil {
				parts[i] += fmt.Sprintf(" (API server %.2f / %.2f s, controller %.2f s)", rd.ColdCPU.ByProcess[apiServerName], rd.ReplayCPU.ByProcess[apiServerName], rd.ColdCPU.ByProcess[controllerName])
			}
		}
		p("| convergence / replay in each of %d rounds (the controller restarted, every AIBOM deleted first; CPU in the cold start / the replay) | %s; median %.2f× |", len(r.Rounds), strings.Join(parts, ", "), r.RatioMedian)
	}
	if r.Replay != nil {
		p("| API server latency of the AIBOM writes: controller's cold start / replay | %s / %s |", r.ColdStart.APIServer, r.Replay.APIServer)
	}
	if r.ColdStart.CPU != nil && r.Replay != nil && r.Replay.CPU != nil {
		p("| machine CPU: controller's cold start / replay | %s / %s |", r.ColdStart.CPU, r.Replay.CPU)
	}
	p("| cold-start requests | %d (%.2f per root), of which %d watches |", r.ColdStart.Total, r.ColdStart.RequestsPerRoot, r.ColdStart.Watches)
	p("| cold-start writes | %d (%.2f per root) |", r.ColdStart.Writes, r.ColdStart.WritesPerRoot)
	p("| cold-start AIBOMs written, then deleted as absorbed | %d |", r.ColdStart.Transient)
	p("| cold-start reconciles | %d (%s) |", r.ColdStart.Reconciles, counts(r.ColdStart.Outcomes))
	p("| cold-start CPU (from the start until settled) | %.2f s, %.2f ms per root |", r.ColdStart.CPUSeconds, r.ColdStart.CPUPerRootMillis)
	p("| cold-start reconcile latency p50 / p99 (bucket-interpolated) | %s |", r.ColdStart.Latency)
	p("| annotation pass: roots annotated | %d |", r.Steady.Annotated)
	p("| annotation pass: reconciles | %d (%s) |", r.Steady.Reconciles, counts(r.Steady.Outcomes))
	p("| annotation pass: CPU | %.2f s |", r.Steady.CPUSeconds)
	p("| annotation pass: requests / writes | %d / %d |", total(r.Steady.Requests), r.Steady.Writes)
	p("| annotation pass: reconcile latency p50 / p99 (bucket-interpolated) | %s |", r.Steady.Latency)
	p("| quiet %.0f s: requests / writes / reconciles / CPU | %d / %d / %d / %.2f s |", r.Quiet.Seconds, total(r.Quiet.Requests), r.Quiet.Writes, r.Quiet.Reconciles, r.Quiet.CPUSeconds)
	if r.Quiet.ResyncPasses > 0 {
		p("| quiet: re-verification passes / workloads enqueued | %d / %d |", r.Quiet.ResyncPasses, r.Quiet.ResyncEnqueued)
	}
	p("| peak RSS (VmHWM) | %s |", mib(r.Memory.PeakRSS))
	p("| RSS at convergence / at the end (VmRSS) | %s / %s |", mib(r.Memory.RSSAtConvergence), mib(r.Memory.RSSAtEnd))
	p("| Go heap in use, settled after the cold start / at the end | %s / %s |", mib(r.Memory.HeapInuseSettled), mib(r.Memory.HeapInuseAtEnd))
	p("| controller's GOMEMLIMIT / GOGC | %s / %s |", orDefault(r.Memory.GoMemLimit, "none"), orDefault(r.Memory.GoGC, "100"))
	p("| AIBOM set still exact at the end | %v |", r.CorrectAtEnd)
	if t := r.Toggle; t != nil {
		p("| opt-out of %s (%d roots, %d objects): AIBOMs gone after / requests | %.2f s / %d (%s) |", t.Namespace, t.Roots, t.Objects, t.OptOutSeconds, total(t.OptOutRequests), counts(t.OptOutRequests))
		p("| opt-in again: every AIBOM correct after / requests | %.2f s / %d (%s) |", t.OptInSeconds, total(t.OptInRequests), counts(t.OptInRequests))
		p("| live heap after a GC: before / opted out / opted in again | %s / %s / %s |", mib(t.LiveHeapBefore), mib(t.LiveHeapOptedOut), mib(t.LiveHeapAfter))
		p("| objects cached (`aibom_cached_objects`): before / opted out / opted in again | %d / %d / %d |", t.CachedBefore, t.CachedOptedOut, t.CachedAfter)
	}
	p("")
	p("Requests by verb and resource (`aibom_api_requests_total`; a list is a GET of the collection):")
	p("")
	p("| request | cold start | annotation pass | quiet |")
	p("|---|---|---|---|")
	keys := map[string]bool{}
	for _, m := range []map[string]int{r.ColdStart.Requests, r.Steady.Requests, r.Quiet.Requests} {
		for k := range m {
			keys[k] = true
		}
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		wi, wj := IsWrite(sorted[i]), IsWrite(sorted[j])
		if wi != wj {
			return wi
		}
		return sorted[i] < sorted[j]
	})
	for _, k := range sorted {
		p("| `%s` | %d | %d | %d |", k, r.ColdStart.Requests[k], r.Steady.Requests[k], r.Quiet.Requests[k])
	}
}

func counts(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// String prints "p50 / p99", or n/a without reconciles.
func (l Latency) String() string {
	if l.Count == 0 {
		return "n/a"
	}
	return seconds(l.P50) + " / " + seconds(l.P99)
}

func seconds(s float64) string {
	switch {
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1000)
	default:
		return fmt.Sprintf("%.2f s", s)
	}
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
