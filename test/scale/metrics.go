package scale

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Sample is one line of the Prometheus text format.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Metrics is a scrape of the controller's /metrics.
type Metrics []Sample

// ParseMetrics reads the Prometheus text exposition format (comments and
// blank lines skipped).
func ParseMetrics(r io.Reader) (Metrics, error) {
	var out Metrics
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	rest := line
	if i := strings.IndexAny(line, "{ "); i < 0 {
		return s, fmt.Errorf("no value")
	} else {
		s.Name, rest = line[:i], line[i:]
	}
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " ,")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.IndexByte(rest, '=')
			if eq < 0 || len(rest) < eq+2 || rest[eq+1] != '"' {
				return s, fmt.Errorf("malformed labels")
			}
			name := rest[:eq]
			rest = rest[eq+2:]
			var val strings.Builder
			i := 0
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					switch rest[i] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[i])
					}
					continue
				}
				val.WriteByte(rest[i])
			}
			if i >= len(rest) {
				return s, fmt.Errorf("unterminated label value")
			}
			s.Labels[name] = val.String()
			rest = rest[i+1:]
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, err
	}
	s.Value = v
	return s, nil
}

// Sum adds the samples of a metric whose labels include match.
func (m Metrics) Sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range m {
		if s.Name == name && matches(s.Labels, match) {
			total += s.Value
		}
	}
	return total
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Requests returns aibom_api_requests_total as "VERB resource" -> count.
func (m Metrics) Requests() map[string]int {
	out := map[string]int{}
	for _, s := range m {
		if s.Name == "aibom_api_requests_total" {
			out[s.Labels["verb"]+" "+s.Labels["resource"]] += int(s.Value)
		}
	}
	return out
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Histogram returns the cumulative buckets of a histogram (summed over the
// series that match), sorted by upper bound.
func (m Metrics) Histogram(name string, match map[string]string) []Bucket {
	by := map[float64]float64{}
	for _, s := range m {
		if s.Name != name+"_bucket" || !matches(s.Labels, match) {
			continue
		}
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			continue
		}
		by[le] += s.Value
	}
	out := make([]Bucket, 0, len(by))
	for le, c := range by {
		out = append(out, Bucket{UpperBound: le, Count: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpperBound < out[j].UpperBound })
	return out
}

// HistogramDelta subtracts an earlier histogram from a later one, bucket by
// bucket.
func HistogramDelta(later, earlier []Bucket) []Bucket {
	before := map[float64]float64{}
	for _, b := range earlier {
		before[b.UpperBound] = b.Count
	}
	out := make([]Bucket, len(later))
	for i, b := range later {
		out[i] = Bucket{UpperBound: b.UpperBound, Count: b.Count - before[b.UpperBound]}
	}
	return out
}

// Quantile estimates the q-quantile of cumulative buckets the way
// Prometheus' histogram_quantile does: linear interpolation inside the bucket
// that holds the rank, the first bucket starting at 0. A rank in the +Inf
// bucket returns the largest finite upper bound. NaN when empty.
func Quantile(q float64, buckets []Bucket) float64 {
	if len(buckets) == 0 {
		return math.NaN()
	}
	total := buckets[len(buckets)-1].Count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	prevBound, prevCount := 0.0, 0.0
	for i, b := range buckets {
		if b.Count >= rank {
			if math.IsInf(b.UpperBound, 1) {
				if i == 0 {
					return math.NaN()
				}
				return buckets[i-1].UpperBound
			}
			if b.Count == prevCount {
				return b.UpperBound
			}
			return prevBound + (b.UpperBound-prevBound)*(rank-prevCount)/(b.Count-prevCount)
		}
		prevBound, prevCount = b.UpperBound, b.Count
	}
	return buckets[len(buckets)-1].UpperBound
}

// scrape reads the metrics endpoint.
func scrape(ctx context.Context, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return ParseMetrics(resp.Body)
}

// ProcStatus reads VmHWM (peak resident set) and VmRSS of a process, in
// bytes, from /proc/<pid>/status.
func ProcStatus(pid int) (hwm, rss int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseProcStatus(string(data))
}

func parseProcStatus(s string) (hwm, rss int64, err error) {
	for _, line := range strings.Split(s, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmHWM" && name != "VmRSS") {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, 0, fmt.Errorf("%s: unexpected %q", name, value)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if name == "VmHWM" {
			hwm = kb * 1024
		} else {
			rss = kb * 1024
		}
	}
	if hwm == 0 || rss == 0 {
		return 0, 0, fmt.Errorf("VmHWM or VmRSS missing")
	}
	return hwm, rss, nil
}
