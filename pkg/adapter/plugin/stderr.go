package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Limits of what a plugin's stderr costs the controller. A plugin writes to
// stderr whatever it likes; the controller logs it line by line, and each
// line is redacted (podtemplate.Redact), stripped of control characters and
// cut to MaxStderrLineBytes, and the lines are rate-limited per plugin.
const (
	// MaxStderrLineBytes caps a logged line of a plugin's stderr (message
	// and fields); the rest is cut and the cut says how many bytes it
	// dropped.
	MaxStderrLineBytes = 1024
	// DefaultStderrLinesPerSecond and DefaultStderrBurst rate-limit the lines
	// logged for one plugin (over all its restarts): a burst of 100 lines
	// (a panic's stack fits), then 10 lines a second. Lines over the limit
	// are dropped and counted, and the log says so.
	DefaultStderrLinesPerSecond = 10
	DefaultStderrBurst          = 100

	// maxStderrReadBytes bounds the part of one line that is kept for
	// redaction; longer lines are cut there (after redaction they are cut to
	// MaxStderrLineBytes anyway). Redacting this much context keeps a token
	// that starts inside the logged part whole.
	maxStderrReadBytes = 64 << 10
	// maxStderrFieldBytes caps one field of an hclog JSON line.
	maxStderrFieldBytes = 256
	// maxStderrFields caps the number of fields of an hclog JSON line.
	maxStderrFields = 16
)

// StderrRate sets how many lines of a plugin's stderr are logged: burst
// lines at once, then perSecond a second (defaults DefaultStderrBurst and
// DefaultStderrLinesPerSecond). Lines over the limit are dropped and
// counted (Client.DroppedStderrLines).
func StderrRate(perSecond float64, burst int) Option {
	return func(o *options) { o.stderrRate, o.stderrBurst = perSecond, burst }
}

// stderrLog logs the lines of one plugin's stderr, shared by its two
// streams (the process's stderr, and os.Stderr forwarded over gRPC) and by
// every restart of the plugin, so that a crash loop does not reset the
// rate limit.
type stderrLog struct {
	log     hclog.Logger
	dropped atomic.Uint64

	mu sync.Mutex
	// A token bucket (not golang.org/x/time/rate: every plugin module
	// imports this package, and would have to require it): tokens lines may
	// be logged now, refilled at perSecond up to burst.
	perSecond float64
	burst     float64
	tokens    float64
	last      time.Time
	// droppedSince counts the lines dropped since the last logged one; the
	// next logged line is preceded by a note saying how many.
	droppedSince uint64
}

func newStderrLog(log hclog.Logger, perSecond float64, burst int) *stderrLog {
	return &stderrLog{log: log, perSecond: perSecond, burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

// allow takes a token if there is one; s.mu is held.
func (s *stderrLog) allow() bool {
	now := time.Now()
	s.tokens = min(s.burst, s.tokens+now.Sub(s.last).Seconds()*s.perSecond)
	s.last = now
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}

// logLine logs one sanitized line, unless over the rate limit.
func (s *stderrLog) logLine(level hclog.Level, msg string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.allow() {
		if s.droppedSince == 0 {
			s.log.Warn("the plugin writes more to stderr than is logged; dropping lines until the rate falls",
				"limit-lines-per-second", s.perSecond, "burst", s.burst)
		}
		s.droppedSince++
		s.dropped.Add(1)
		return
	}
	if s.droppedSince > 0 {
		s.log.Warn("dropped lines of the plugin's stderr over the rate limit", "dropped", s.droppedSince)
		s.droppedSince = 0
	}
	s.log.Log(level, msg, args...)
}

// stderrStream splits one stream of a plugin's stderr into lines, logs
// them through a stderrLog, and keeps the last (sanitized) lines for error
// messages.
type stderrStream struct {
	out  *stderrLog
	tail *tailBuffer

	mu      sync.Mutex
	partial []byte
	cut     int // bytes of the current line beyond maxStderrReadBytes
}

func (w *stderrStream) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		room := maxStderrReadBytes - len(w.partial)
		if len(chunk) > room {
			w.cut += len(chunk) - room
			chunk = chunk[:room]
		}
		w.partial = append(w.partial, chunk...)
		if i < 0 {
			break
		}
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

// flush logs the current line; w.mu is held.
func (w *stderrStream) flush() {
	line := strings.TrimRight(string(w.partial), "\r")
	cut := w.cut
	w.partial, w.cut = w.partial[:0], 0
	if strings.TrimSpace(line) == "" {
		return
	}
	level, msg, args := parseStderrLine(line, cut)
	if w.tail != nil {
		_, _ = w.tail.Write([]byte(msg + "\n"))
	}
	w.out.logLine(level, msg, args...)
}

// parseStderrLine sanitizes a line; an hclog JSON line (what plugin.Serve's
// logger and go-plugin write) keeps its level, message and fields.
func parseStderrLine(line string, cut int) (hclog.Level, string, []any) {
	if cut == 0 && strings.HasPrefix(line, "{") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) == nil {
			if msg, ok := entry["@message"].(string); ok {
				level := hclog.LevelFromString(fmt.Sprint(entry["@level"]))
				if level == hclog.NoLevel {
					level = hclog.Info
				}
				keys := make([]string, 0, len(entry))
				for k := range entry {
					if k != "@message" && k != "@level" && k != "@timestamp" {
						keys = append(keys, k)
					}
				}
				sort.Strings(keys)
				var args []any
				for i, k := range keys {
					if i == maxStderrFields {
						args = append(args, "fields-cut", len(keys)-i)
						break
					}
					args = append(args, sanitizeStderr(k, 64, 0), sanitizeStderr(fmt.Sprint(entry[k]), maxStderrFieldBytes, 0))
				}
				return level, sanitizeStderr(msg, MaxStderrLineBytes, 0), args
			}
		}
	}
	level := hclog.Info
	if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
		level = hclog.Error
	}
	return level, sanitizeStderr(line, MaxStderrLineBytes, cut), nil
}

// sanitizeStderr redacts secrets in s, escapes control characters (a
// plugin's line must not forge log lines or drive a terminal) and cuts the
// result to max bytes, saying how many bytes were cut (including cut bytes
// already dropped from the input).
func sanitizeStderr(s string, max, cut int) string {
	s, _ = podtemplate.Redact(s)
	s = escapeControl(s)
	if len(s) > max {
		end := max
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		cut += len(s) - end
		s = s[:end]
	}
	if cut > 0 {
		s += fmt.Sprintf(" [%d bytes cut]", cut)
	}
	return s
}

// escapeControl replaces control characters (but tab) and invalid UTF-8
// with Go escapes.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\t') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) && r != '\t':
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// quietStderrLogger is the logger handed to go-plugin: go-plugin logs each
// line of the plugin's stderr verbatim through logger.Named(<binary name>),
// which this logger silences; the lines are logged by a stderrStream
// instead. go-plugin's own messages pass.
type quietStderrLogger struct {
	hclog.Logger
	binary string
}

func (l quietStderrLogger) Named(name string) hclog.Logger {
	if name == l.binary {
		return hclog.NewNullLogger()
	}
	return l.Logger.Named(name)
}

// goPluginExitMessage is the message go-plugin logs when a plugin process
// ends: at info level for a clean exit, at error level otherwise.
const goPluginExitMessage = "plugin process exited"

// Info demotes go-plugin's clean-exit line to debug: every aibom scan, and
// every controller stop, ends its plugins on purpose, and a line per
// plugin per run says nothing. An abnormal exit is logged at error level by
// go-plugin and passes unchanged.
func (l quietStderrLogger) Info(msg string, args ...any) {
	if msg == goPluginExitMessage {
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Info(msg, args...)
}
