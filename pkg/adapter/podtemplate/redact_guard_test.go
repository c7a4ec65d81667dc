package podtemplate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// redactUnguarded is Redact without the guards: every token pattern scans
// every value. The guards must never change what Redact returns.
func redactUnguarded(s string) (string, []string) {
	out, reasons := redactURLStage(s)
	masked := out
	for _, p := range tokenPatterns {
		masked = p.re.ReplaceAllString(masked, p.replacement())
	}
	masked = replaceRuns(masked, secretKeyRun, func(string) bool { return false }, awsSecretKey)
	masked = replaceRuns(masked, hexRun, func(run string) bool { return hasDigit(run) && hasLetter(run) }, nil)
	masked = replaceRuns(masked, base64Run, mixedCase, nil)
	if masked != out {
		out = masked
		reasons = append(reasons, ReasonToken)
	}
	return out, reasons
}

// guardPieces are fragments whose combinations reach every guard's edge: a
// run one short of its pattern's minimum and one at it, the literals the
// guards look for, a replacement that joins two runs, Unicode case folding.
var guardPieces = []string{
	"", " ", "/", "+", "=", ":", "@", "?token=", "https://u:p@h.example/", "sha256:",
	"hf_", "ghp_", "github_pat_", "nvapi-", "sk-", "AKIA", "eyJ", "xoxb-1-", "AIza", "-----BEGIN RSA PRIVATE KEY-----",
	"Bearer ", "BASIC\t", "baſic ", "bearer", "K", "ſ",
	strings.Repeat("a", 7), strings.Repeat("Ab1", 6), strings.Repeat("aB3", 10), strings.Repeat("9f", 16),
	strings.Repeat("Q", 19), strings.Repeat("x7Y", 13) + "Z",
	tokHF, tokGHP, tokGHPAT, tokNV, tokSK, tokAWS, tokJWT, tokHex, tokBase64,
}

func TestRedactGuardsChangeNothing(t *testing.T) {
	n := 0
	for _, a := range guardPieces {
		for _, b := range guardPieces {
			for _, c := range []string{"", "-x", tokHF[:20], "Ab1Ab1Ab1Ab1Ab1"} {
				in := a + b + c
				want, wantReasons := redactUnguarded(in)
				got, reasons := Redact(in)
				require.Equal(t, want, got, "input %q", in)
				require.Equal(t, wantReasons, reasons, "input %q", in)
				n++
			}
		}
	}
	require.Greater(t, n, 5000)
}

// FuzzRedactGuards: for any value, the guarded Redact returns what the
// unguarded one does.
func FuzzRedactGuards(f *testing.F) {
	for _, p := range guardPieces {
		f.Add(p + " " + tokBase64)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, wantReasons := redactUnguarded(in)
		got, reasons := Redact(in)
		require.Equal(t, want, got)
		require.Equal(t, wantReasons, reasons)
	})
}
