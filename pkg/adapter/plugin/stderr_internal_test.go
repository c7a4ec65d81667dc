package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
)

func TestStderrRateRefills(t *testing.T) {
	s := newStderrLog(hclog.NewNullLogger(), 10, 2)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, want := range []bool{true, true, false} {
		if got := s.allow(); got != want {
			t.Fatalf("line %d: allow() = %v, want %v (burst 2)", i, got, want)
		}
	}
	s.last = s.last.Add(-150 * time.Millisecond) // 1.5 lines at 10/s
	if !s.allow() || s.allow() {
		t.Fatalf("after 150ms at 10 lines/s one line is allowed, not two")
	}
	s.last = s.last.Add(-time.Hour) // refills up to the burst only
	if !s.allow() || !s.allow() || s.allow() {
		t.Fatalf("an idle hour refills the burst of 2, no more")
	}
}

func TestSanitizeStderr(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain line", 100, "plain line"},
		{"tab\tkept", 100, "tab\tkept"},
		{"bell\a and newline\n", 100, `bell\a and newline\n`},
		{"bad utf8 \xff", 100, `bad utf8 \xff`},
		{"ANSI \x1b[2J", 100, `ANSI \x1b[2J`},
		{"key hf_abcdefghijklmnopqrstuvwxyz0123456789", 100, "key REDACTED"},
		// Redacted before it is cut: no prefix of the token survives.
		{"key hf_abcdefghijklmnopqrstuvwxyz0123456789", 10, "key REDACT [2 bytes cut]"},
		// Cut on a rune boundary: 11 bytes leave five 2-byte runes.
		{strings.Repeat("é", 10), 11, strings.Repeat("é", 5) + " [10 bytes cut]"},
	} {
		if got := sanitizeStderr(tc.in, tc.max, 0); got != tc.want {
			t.Errorf("sanitizeStderr(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// A plugin's clean exit is a debug line; an abnormal one stays an error.
func TestCleanPluginExitIsLoggedAtDebug(t *testing.T) {
	var buf bytes.Buffer
	l := quietStderrLogger{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &buf}), binary: "x"}
	l.Info(goPluginExitMessage, "plugin", "x", "id", 1)
	require.Empty(t, buf.String())
	l.Info("adapter plugin restarted")
	require.Contains(t, buf.String(), "adapter plugin restarted")
	buf.Reset()
	l.Error(goPluginExitMessage, "plugin", "x", "error", "exit status 2")
	require.Contains(t, buf.String(), "exit status 2")
}
