package scale

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// Round is one cold start and the replay of its writes (Options.Rounds).
type Round struct {
	ConvergedSeconds float64 `json:"convergedSeconds"`
	ReplaySeconds    float64 `json:"replaySeconds"`
	// Ratio is ConvergedSeconds / ReplaySeconds.
	Ratio     float64 `json:"ratio"`
	ColdCPU   *CPUUse `json:"coldCPU,omitempty"`
	ReplayCPU *CPUUse `json:"replayCPU,omitempty"`
}

// summariseRounds sets each round's ratio and their median.
func (r *Report) summariseRounds() {
	ratios := make([]float64, 0, len(r.Rounds))
	for i := range r.Rounds {
		if r.Rounds[i].ReplaySeconds > 0 {
			r.Rounds[i].Ratio = round2(r.Rounds[i].ConvergedSeconds / r.Rounds[i].ReplaySeconds)
			ratios = append(ratios, r.Rounds[i].Ratio)
		}
	}
	r.RatioMedian = median(ratios)
}

// median is the middle value of xs (the mean of the two middle ones for an
// even count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return round2((s[len(s)/2-1] + s[len(s)/2]) / 2)
}

// coldRound times one more cold start and its replay (Options.Rounds): every
// AIBOM (the previous replay's copies) deleted, the controller started
// again until every AIBOM is correct, settled and stopped, then its writes
// replayed as after the first cold start.
func coldRound(ctx context.Context, opts Options, c client.Client, kubeconfig []byte, track *tracker, n int, logf func(string, ...any)) (Round, error) {
	var list v1alpha1.AIBOMList
	if err := c.List(ctx, &list); err != nil {
		return Round{}, err
	}
	if err := deleteAIBOMs(ctx, c, track, list.Items); err != nil {
		return Round{}, err
	}
	track.rearm()
	cpuBefore, cpuErr := TakeCPUSnapshot(cpuProcesses)
	ctl, err := startController(opts, kubeconfig, fmt.Sprintf("controller-round%d.log", n))
	if err != nil {
		return Round{}, err
	}
	defer ctl.stop()
	track.begin(ctl.started)
	logf("round %d: controller started (pid %d), log %s", n, ctl.cmd.Process.Pid, ctl.logPath)
	if err := waitConverged(ctx, opts, track, ctl, logf); err != nil {
		return Round{}, err
	}
	round := Round{ConvergedSeconds: track.convergedAt().Seconds()}
	if cpuAfter, err := TakeCPUSnapshot(cpuProcesses); err == nil && cpuErr == nil {
		use := cpuAfter.Since(cpuBefore, time.Since(ctl.started).Seconds())
		round.ColdCPU = &use
	}
	if _, err := settle(ctx, opts, ctl); err != nil {
		return Round{}, fmt.Errorf("settling after the cold start: %w", err)
	}
	ctl.stop()
	plan, err := prepareReplay(ctx, c, track)
	if err != nil {
		return Round{}, err
	}
	rp, err := replay(ctx, c, plan, opts.Writers)
	if err != nil {
		return Round{}, err
	}
	round.ReplaySeconds, round.ReplayCPU = rp.Seconds, rp.CPU
	logf("round %d: every AIBOM correct after %.1fs; replay %.1fs", n, round.ConvergedSeconds, round.ReplaySeconds)
	return round, nil
}

// waitTrackerEmpty waits until the harness's own AIBOM watch has taken in
// the deletion of every AIBOM.
func waitTrackerEmpty(ctx context.Context, track *tracker) error {
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, deleteOriginalsTimeout, true, func(context.Context) (bool, error) {
		return track.presentCount() == 0, nil
	}); err != nil {
		return fmt.Errorf("the harness's AIBOM watch still holds %d AIBOMs after their deletion: %w", track.presentCount(), err)
	}
	return nil
}
