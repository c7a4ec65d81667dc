package scale

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// userHZ is the unit of the CPU times in /proc (USER_HZ, 100 on Linux).
const userHZ = 100

// CPUSnapshot is the machine's CPU time, and that of the processes of a
// few names, at one moment.
type CPUSnapshot struct {
	busy, total float64         // seconds, all cores
	steal       float64         // seconds the hypervisor gave the cores to others
	pids        map[int]float64 // seconds (user and system) per process
	names       map[int]string  // the name each process was matched by
}

// CPUUse is where the machine's CPU went between two snapshots: every core
// busy or idle, and the share of the named processes (the API server, etcd,
// the controller, this harness). It shows whether a phase was bounded by
// the CPU the processes share.
type CPUUse struct {
	Seconds float64 `json:"seconds"`
	// BusySeconds of CoreSeconds: CPU time spent on anything but idle
	// and I/O wait, summed over the cores, and the cores' wall time.
	BusySeconds float64 `json:"busySeconds"`
	CoreSeconds float64 `json:"coreSeconds"`
	// StealSeconds is the part of BusySeconds the hypervisor ran something
	// else while a core of this machine had work (/proc/stat's steal): a
	// phase with more of it ran on a slower machine.
	StealSeconds float64 `json:"stealSeconds"`
	// ByProcess: CPU seconds (user and system) by process name.
	ByProcess map[string]float64 `json:"byProcess"`
}

// cpuProcesses are the processes a scale run accounts: the control plane,
// the controller and the harness (go run names it after its package).
var cpuProcesses = []string{apiServerName, "etcd", controllerName, "scale"}

// The process names of the API server and the controller, as /proc names
// them.
const (
	apiServerName  = "kube-apiserver"
	controllerName = "aibom-controller"
)

// TakeCPUSnapshot reads /proc/stat and the stat file of every process
// whose name is one of names.
func TakeCPUSnapshot(names []string) (CPUSnapshot, error) {
	s := CPUSnapshot{pids: map[int]float64{}, names: map[int]string{}}
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	if s.busy, s.total, s.steal, err = parseMachineCPU(string(data)); err != nil {
		return s, err
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		pid, name, secs, err := parseProcessCPU(string(raw))
		if err != nil {
			continue
		}
		for _, n := range names {
			// The kernel truncates a process name to 15 bytes.
			if name == n || (len(name) == 15 && strings.HasPrefix(n, name)) {
				s.pids[pid], s.names[pid] = secs, n
			}
		}
	}
	return s, nil
}

// Since is the CPU use from earlier to s. A process that exited in between
// is not counted; one that started counts from zero.
func (s CPUSnapshot) Since(earlier CPUSnapshot, seconds float64) CPUUse {
	u := CPUUse{Seconds: seconds, BusySeconds: round2(s.busy - earlier.busy), CoreSeconds: round2(s.total - earlier.total),
		StealSeconds: round2(s.steal - earlier.steal), ByProcess: map[string]float64{}}
	for pid, secs := range s.pids {
		u.ByProcess[s.names[pid]] += secs - earlier.pids[pid]
	}
	for k, v := range u.ByProcess {
		u.ByProcess[k] = round2(v)
	}
	return u
}

// String is "busy B of C core-seconds in S s, steal T s (name N s, ...)",
// the processes by name.
func (u *CPUUse) String() string {
	names := slices.Sorted(maps.Keys(u.ByProcess))
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f s", n, u.ByProcess[n]))
	}
	return fmt.Sprintf("busy %.2f of %.2f core-seconds in %.2f s, steal %.2f s (%s)", u.BusySeconds, u.CoreSeconds, u.Seconds, u.StealSeconds, strings.Join(parts, ", "))
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// parseMachineCPU reads the "cpu" line of /proc/stat: the time busy (all
// but idle and iowait), the total and the time stolen by the hypervisor, in
// seconds over all cores.
func parseMachineCPU(stat string) (busy, total, steal float64, err error) {
	for _, line := range strings.Split(stat, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "cpu" {
			continue
		}
		// user nice system idle iowait irq softirq steal; the guest times
		// after them are already counted in user and nice.
		var idle float64
		for i, v := range f[1:min(len(f), 9)] {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, 0, 0, fmt.Errorf("/proc/stat: %q: %w", line, err)
			}
			total += n
			switch i {
			case 3, 4: // idle, iowait
				idle += n
			case 7:
				steal = n
			}
		}
		return (total - idle) / userHZ, total / userHZ, steal / userHZ, nil
	}
	return 0, 0, 0, fmt.Errorf("/proc/stat: no cpu line")
}

// parseProcessCPU reads a /proc/PID/stat line: the pid, the name and the
// CPU time (utime + stime) in seconds. The name is in parentheses and may
// hold spaces and parentheses itself, so the fields are counted from the
// last ")".
func parseProcessCPU(stat string) (pid int, name string, seconds float64, err error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return 0, "", 0, fmt.Errorf("stat %q: no name", stat)
	}
	if pid, err = strconv.Atoi(strings.TrimSpace(stat[:open])); err != nil {
		return 0, "", 0, err
	}
	name = stat[open+1 : end]
	f := strings.Fields(stat[end+1:])
	// After the name: state(3) ... utime(14) stime(15).
	if len(f) < 13 {
		return 0, "", 0, fmt.Errorf("stat of %d: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, "", 0, fmt.Errorf("stat of %d: times %q %q", pid, f[11], f[12])
	}
	return pid, name, (utime + stime) / userHZ, nil
}
