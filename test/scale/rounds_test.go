package scale

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMedian(t *testing.T) {
	require.Zero(t, median(nil))
	require.Equal(t, 1.2, median([]float64{1.2}))
	require.Equal(t, 1.19, median([]float64{1.29, 1.01, 1.19}))
	require.Equal(t, 1.15, median([]float64{1.3, 1.0, 1.1, 1.2}))
	xs := []float64{3, 1, 2}
	median(xs)
	require.Equal(t, []float64{3, 1, 2}, xs, "the input is left in its order")
}

// TestSummariseRounds: each round's ratio is its convergence over its
// replay; a round without a replay time has none and is left out of the
// median.
func TestSummariseRounds(t *testing.T) {
	r := Report{Rounds: []Round{{ConvergedSeconds: 6, ReplaySeconds: 5}, {ConvergedSeconds: 4.8, ReplaySeconds: 4.8}, {ConvergedSeconds: 7}, {ConvergedSeconds: 6.5, ReplaySeconds: 5}}}
	r.summariseRounds()
	require.Equal(t, []float64{1.2, 1, 0, 1.3}, []float64{r.Rounds[0].Ratio, r.Rounds[1].Ratio, r.Rounds[2].Ratio, r.Rounds[3].Ratio})
	require.Equal(t, 1.2, r.RatioMedian)
}

func TestRoundsNeedTheReplay(t *testing.T) {
	o := Options{Controller: "aibom-controller", Rounds: 2}
	require.ErrorContains(t, o.defaults(), "needs the replay")
	o = Options{Controller: "aibom-controller", Rounds: 2, Replay: true}
	require.NoError(t, o.defaults())
	o = Options{Controller: "aibom-controller"}
	require.NoError(t, o.defaults())
	require.Equal(t, 1, o.Rounds)
}

// TestRoundsInTheMarkdown: with more than one round, the report has a row
// with each round's times, ratio and CPU, and the median.
func TestRoundsInTheMarkdown(t *testing.T) {
	cpu := func(api, ctl float64) *CPUUse {
		return &CPUUse{ByProcess: map[string]float64{apiServerName: api, controllerName: ctl}}
	}
	r := Report{
		ColdStart: ColdStart{ConvergedSeconds: 6},
		Replay:    &Replay{Seconds: 5, Writes: 2000, Writers: 8},
		Rounds: []Round{
			{ConvergedSeconds: 6, ReplaySeconds: 5, ColdCPU: cpu(7, 1.8), ReplayCPU: cpu(6, 0)},
			{ConvergedSeconds: 5.5, ReplaySeconds: 5},
		},
	}
	r.summariseRounds()
	var md bytes.Buffer
	r.WriteMarkdown(&md)
	require.Contains(t, md.String(), "| convergence / replay in each of 2 rounds")
	require.Contains(t, md.String(), "6.00 s / 5.00 s = 1.20× (API server 7.00 / 6.00 s, controller 1.80 s), 5.50 s / 5.00 s = 1.10×; median 1.15× |")

	// One round: no such row.
	r.Rounds = r.Rounds[:1]
	md.Reset()
	r.WriteMarkdown(&md)
	require.NotContains(t, md.String(), "convergence / replay in each of")
}
