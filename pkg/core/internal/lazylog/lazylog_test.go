package lazylog

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
)

// recorder is a funcr logger writing its lines to a slice, with the
// caller's file and line, at verbosity 1.
func recorder(lines *[]string) logr.Logger {
	return funcr.New(func(prefix, args string) { *lines = append(*lines, prefix+" "+args) },
		funcr.Options{LogCaller: funcr.All, Verbosity: 1})
}

// exercise logs through every path a logger has, each message on its own
// line of this file, so that the caller recorded is comparable.
func exercise(l logr.Logger) {
	l = l.WithName("core").WithValues("controller", "aibom")
	r := l.WithValues("workload", "Deployment.apps/team/vllm").WithValues("reconcileID", 7)
	r.Info("AIBOM written", "outcome", "created")
	r.V(1).Info("reconciled", "outcome", "unchanged")
	r.V(2).Info("not shown")
	r.WithName("sinks").Error(errors.New("refused"), "delivery failed", "sink", "dt")
	l.Info("no request values")
	r.WithCallDepth(0).Info("call depth kept")
	helper(r)
}

func helper(l logr.Logger) {
	l.WithCallDepth(1).Info("reported at the helper's caller")
}

// The wrapped logger writes exactly the lines the logger itself writes:
// the same messages, names, pairs in the same order, and callers.
func TestWrapLogsWhatTheLoggerLogs(t *testing.T) {
	var eager, lazy []string
	exercise(recorder(&eager))
	exercise(Wrap(recorder(&lazy)))
	require.Len(t, eager, 6)
	require.Equal(t, eager, lazy)
	require.Contains(t, lazy[0], `"controller"="aibom" "workload"="Deployment.apps/team/vllm" "reconcileID"=7 "outcome"="created"`)
	require.Contains(t, lazy[0], "lazylog_test.go")
}

// countingSink counts the WithValues calls that reach it.
type countingSink struct {
	logr.LogSink
	withValues *int
}

func (c countingSink) WithValues(kv ...any) logr.LogSink {
	*c.withValues++
	return countingSink{LogSink: c.LogSink.WithValues(kv...), withValues: c.withValues}
}

// Pairs reach the sink only with a message: a request that logs nothing
// costs the sink nothing.
func TestWrapDefersValuesUntilAMessage(t *testing.T) {
	var lines []string
	calls := 0
	base := logr.New(countingSink{LogSink: recorder(&lines).GetSink(), withValues: &calls})
	l := Wrap(base)
	for i := range 100 {
		_ = l.WithValues("workload", i).WithValues("reconcileID", i)
	}
	require.Zero(t, calls)
	require.Empty(t, lines)
	l.WithValues("workload", "x").V(3).Info("disabled")
	require.Empty(t, lines)
	l.WithValues("workload", "x").Info("shown")
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], `"workload"="x"`)
	require.Zero(t, calls, "the pairs go with the message, not through WithValues")
}

// Siblings derived from one logger do not see each other's pairs.
func TestWrapSiblingsKeepTheirOwnValues(t *testing.T) {
	var lines []string
	l := Wrap(recorder(&lines)).WithValues("a", 1)
	x, y := l.WithValues("x", 1), l.WithValues("y", 2)
	x.Info("x")
	y.Info("y")
	require.Contains(t, lines[0], `"a"=1 "x"=1`)
	require.NotContains(t, lines[0], `"y"`)
	require.Contains(t, lines[1], `"a"=1 "y"=2`)
	require.NotContains(t, lines[1], `"x"`)
}

func TestWrapKeepsTheDiscardLoggerAndDoesNotWrapTwice(t *testing.T) {
	require.Nil(t, Wrap(logr.Discard()).GetSink())
	var lines []string
	once := Wrap(recorder(&lines))
	require.Same(t, once.GetSink(), Wrap(once).GetSink())
}
