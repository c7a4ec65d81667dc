// Package lazylog defers a logger's key/value pairs until something is
// logged. The controller gives every request it works on a logger with the
// request's names (controller-runtime adds a reconcile ID), and most
// requests log nothing: a zap logger encodes the pairs of WithValues at once,
// into a buffer of its own, so each request paid for encodings nobody read
// (a tenth of the bytes the controller allocated at a cold start).
package lazylog

import (
	"slices"

	"github.com/go-logr/logr"
)

// Wrap returns a logger that logs what l logs, the same pairs in the same
// order, but keeps the pairs given to WithValues unencoded until a message
// is logged at an enabled level.
func Wrap(l logr.Logger) logr.Logger {
	sink := l.GetSink()
	if sink == nil {
		return l // the discarding logger
	}
	if _, ok := sink.(*lazySink); ok {
		return l
	}
	// The wrapper is one more frame between the caller and the sink.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return logr.New(&lazySink{sink: sink})
}

// lazySink holds the pairs of WithValues and hands them to its sink with
// each message.
type lazySink struct {
	sink logr.LogSink
	// values are the pairs given to WithValues, oldest first. Never
	// appended to in place: a derived sink gets its own copy.
	values []any
}

var _ logr.CallDepthLogSink = (*lazySink)(nil)

// Init implements logr.LogSink: the wrapped sink was initialised by its own
// logger, and Wrap accounted for the extra frame.
func (s *lazySink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink.
func (s *lazySink) Enabled(level int) bool { return s.sink.Enabled(level) }

// Info implements logr.LogSink.
func (s *lazySink) Info(level int, msg string, keysAndValues ...any) {
	s.sink.Info(level, msg, s.with(keysAndValues)...)
}

// Error implements logr.LogSink.
func (s *lazySink) Error(err error, msg string, keysAndValues ...any) {
	s.sink.Error(err, msg, s.with(keysAndValues)...)
}

// WithValues implements logr.LogSink: the pairs are kept, not encoded.
func (s *lazySink) WithValues(keysAndValues ...any) logr.LogSink {
	if len(keysAndValues) == 0 {
		return s
	}
	return &lazySink{sink: s.sink, values: s.with(keysAndValues)}
}

// WithName implements logr.LogSink. A name and the pairs commute: the
// name is a field of its own.
func (s *lazySink) WithName(name string) logr.LogSink {
	return &lazySink{sink: s.sink.WithName(name), values: s.values}
}

// WithCallDepth implements logr.CallDepthLogSink.
func (s *lazySink) WithCallDepth(depth int) logr.LogSink {
	cd, ok := s.sink.(logr.CallDepthLogSink)
	if !ok {
		return s
	}
	return &lazySink{sink: cd.WithCallDepth(depth), values: s.values}
}

// with is the kept pairs followed by more, in a new slice.
func (s *lazySink) with(more []any) []any {
	if len(s.values) == 0 {
		return more
	}
	return append(slices.Clip(s.values), more...)
}
