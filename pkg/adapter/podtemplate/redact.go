package podtemplate

import (
	"regexp"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// Redaction reasons recorded in adapter.Redaction.Reason.
const (
	// ReasonSecretName: a value was not read because its name looks like a
	// secret (an env var named HF_TOKEN, an annotation key ending in
	// "password").
	ReasonSecretName = "secret-name"
	// ReasonURLCredentials: credentials in a URL (user info, or a token-like
	// query parameter) were masked.
	ReasonURLCredentials = "url-credentials"
	// ReasonToken: a token-shaped string was masked.
	ReasonToken = "token"
)

// Redacted replaces every masked part of a value.
const Redacted = "REDACTED"

var secretNameParts = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY",
	"CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY",
}

// secretNameNormal folds separators and removes the token words that name
// no credential; built once (a Replacer's first use builds its tables).
var secretNameNormal = strings.NewReplacer("-", "_", ".", "_", "TOKENIZER", "", "TOKENS", "")

// IsSecretName reports whether a name (an env var, an annotation key) looks
// like it holds a secret: it contains, in any case, one of TOKEN, SECRET,
// PASSWORD, PASSWD, API_KEY, APIKEY, CREDENTIAL, PRIVATE_KEY or ACCESS_KEY.
// "-" and "." count as "_", so "api-key" matches too. "TOKENIZER" is not
// a token: TOKENIZER_MODE is not secret, TOKENIZER_TOKEN is.
func IsSecretName(name string) bool {
	n := strings.ToUpper(name)
	// "TOKENS" counts tokens (MAX_TOTAL_TOKENS); "TOKENIZER" names one.
	n = secretNameNormal.Replace(n)
	for _, p := range secretNameParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

var (
	// urlStart finds where a URL begins: a scheme and "://".
	urlStart = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://`)
	// scpUserInfo matches the "user:password@host:" of an scp or NFS style
	// location ("alice:pw@nas.example:/models"), which has no scheme.
	scpUserInfo = regexp.MustCompile(`(^|[\s=,;'"(])[^\s/@:'"=]+:[^\s'"]+@([A-Za-z0-9][A-Za-z0-9.-]*:)`)
	// urlSecretParam matches a query or fragment parameter that carries a
	// credential by a well-known name (a pre-signed URL's signature).
	urlSecretParam = regexp.MustCompile(`(?i)([?&#;](?:token|access_token|auth|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential|api_key|apikey|key|password|secret|code)=)[^&#;\s]+`)
	// urlParam matches any query or fragment parameter, for the names
	// IsSecretName recognises ("hf_token", "access-token").
	urlParam = regexp.MustCompile(`([?&#;])([A-Za-z0-9_.\-]+)=([^&#;\s]*)`)

	// tokenPatterns match well-known token formats. Each has a guard: a
	// condition every match needs (a literal it contains, a run of a
	// minimum length), checked first because most values match none and a
	// guard costs a fraction of a regular expression's scan.
	tokenPatterns = []guardedPattern{
		{regexp.MustCompile(`hf_[A-Za-z0-9]{30,}`), func(s string, r runs) bool { return r.alnum >= 30 && strings.Contains(s, "hf_") }, ""},
		{regexp.MustCompile(`gh[opsur]_[A-Za-z0-9]{30,}`), func(s string, r runs) bool { return r.alnum >= 30 && strings.Contains(s, "_") }, ""},
		{regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,}`), func(s string, _ runs) bool { return strings.Contains(s, "github_pat_") }, ""},
		{regexp.MustCompile(`nvapi-[A-Za-z0-9_-]{20,}`), func(s string, _ runs) bool { return strings.Contains(s, "nvapi-") }, ""},
		{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), func(s string, _ runs) bool { return strings.Contains(s, "sk-") }, ""},
		{regexp.MustCompile(`(?:AKIA|ASIA)[0-9A-Z]{16}`), func(_ string, r runs) bool { return r.alnum >= 20 }, ""},
		{regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), func(s string, _ runs) bool { return strings.Contains(s, "eyJ") }, ""},
		{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`), func(s string, _ runs) bool { return strings.Contains(s, "-----BEGIN ") }, ""},
		{regexp.MustCompile(`xox[abeprs]-[0-9]+-[A-Za-z0-9-]{8,}`), func(s string, _ runs) bool { return strings.Contains(s, "xox") }, ""},
		{regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`), func(s string, _ runs) bool { return strings.Contains(s, "AIza") }, ""},
		// The credential after an HTTP Authorization scheme ("Bearer
		// <token>", "Basic <base64>"); the scheme word is kept. Case is
		// folded as Unicode folds it ("baſic" matches too), so the guard
		// passes every value that is not plain ASCII.
		{regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/-]{8,}=*`), mayNameAuthScheme, "${1}${2}" + Redacted},
	}

	// secretKeyRun finds runs of the AWS secret access key alphabet; a run of
	// exactly 40 characters standing alone is masked (see awsSecretKey).
	secretKeyRun = regexp.MustCompile(`[A-Za-z0-9/+]{40,}`)

	// hexRun and base64Run find long runs that may be random secrets; they
	// are masked when they look random (see Redact).
	hexRun    = regexp.MustCompile(`[0-9A-Fa-f]{32,}`)
	base64Run = regexp.MustCompile(`[A-Za-z0-9+]{32,}={0,2}`)
)

// Redact masks secrets in a value that is about to become part of a finding
// (a model name, a data name). It masks, in order:
//
//   - URL credentials: "https://user:pass@host/x" becomes
//     "https://REDACTED@host/x", and token-like query parameters
//     ("?token=…", "X-Amz-Signature=…") lose their value (reason
//     ReasonURLCredentials);
//   - token-shaped strings (reason ReasonToken): Hugging Face "hf_…",
//     GitHub "ghp_…"/"gho_…"/"github_pat_…", NVIDIA "nvapi-…", "sk-…" API
//     keys (OpenAI "sk-proj-…" too), AWS access key ids "AKIA…" and secret
//     access keys (40 base64 characters standing alone), Slack "xoxb-…"/
//     "xoxp-…", Google "AIza…", JWTs "eyJ….….…", PEM private keys, the
//     credential after "Bearer " or "Basic " (the scheme word is kept), and
//     runs of 32 or more hex or base64 characters that look random (hex:
//     letters and digits; base64: upper case, lower case and digits).
//     A digest written "sha256:<hex>" or "sha512:<hex>" is left alone.
//
// It returns the masked value and the reasons, each at most once, in the
// order above; no reasons means the value is unchanged. A Git commit hash
// (40 hex characters) in a model path is masked too: a known false positive
// that errs on the side of withholding.
func Redact(s string) (string, []string) {
	out, reasons := redactURLStage(s)
	masked := out
	r := runsOf(masked)
	for _, p := range tokenPatterns {
		if !p.possible(masked, r) {
			continue
		}
		if m := p.re.ReplaceAllString(masked, p.replacement()); m != masked {
			// A replacement can join runs: the guards read the new value.
			masked, r = m, runsOf(m)
		}
	}
	if r.alnumSlashPlus >= 40 {
		if m := replaceRuns(masked, secretKeyRun, func(run string) bool { return false }, awsSecretKey); m != masked {
			masked, r = m, runsOf(m)
		}
	}
	if r.alnum >= 32 {
		if m := replaceRuns(masked, hexRun, func(run string) bool { return hasDigit(run) && hasLetter(run) }, nil); m != masked {
			masked, r = m, runsOf(m)
		}
	}
	if r.alnumPlus >= 32 {
		masked = replaceRuns(masked, base64Run, mixedCase, nil)
	}
	if masked != out {
		out = masked
		reasons = append(reasons, ReasonToken)
	}
	return out, reasons
}

// redactURLStage is Redact's first stage: URL credentials, with
// ReasonURLCredentials when it masked any.
func redactURLStage(s string) (string, []string) {
	if !strings.Contains(s, "@") && !strings.ContainsAny(s, "?&#") {
		return s, nil
	}
	if masked := redactURLs(s); masked != s {
		return masked, []string{ReasonURLCredentials}
	}
	return s, nil
}

// guardedPattern is a token pattern and a necessary condition of its match.
type guardedPattern struct {
	re       *regexp.Regexp
	possible func(s string, r runs) bool
	// replace is the match's replacement (ReplaceAllString's template);
	// "" is Redacted.
	replace string
}

func (p guardedPattern) replacement() string {
	if p.replace == "" {
		return Redacted
	}
	return p.replace
}

// runs holds the longest runs of a value's characters in the alphabets the
// token patterns are built of: a pattern that needs a longer run cannot
// match.
type runs struct {
	alnum          int // [A-Za-z0-9]
	alnumPlus      int // [A-Za-z0-9+]
	alnumSlashPlus int // [A-Za-z0-9/+]
}

func runsOf(s string) runs {
	var r, cur runs
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		cur.alnum = extend(cur.alnum, alnum)
		cur.alnumPlus = extend(cur.alnumPlus, alnum || c == '+')
		cur.alnumSlashPlus = extend(cur.alnumSlashPlus, alnum || c == '+' || c == '/')
		r.alnum = max(r.alnum, cur.alnum)
		r.alnumPlus = max(r.alnumPlus, cur.alnumPlus)
		r.alnumSlashPlus = max(r.alnumSlashPlus, cur.alnumSlashPlus)
	}
	return r
}

func extend(n int, in bool) int {
	if in {
		return n + 1
	}
	return 0
}

// mayNameAuthScheme reports whether s may hold "bearer" or "basic" in any
// case: false only for plain ASCII without either word.
func mayNameAuthScheme(s string, _ runs) bool {
	if len(s) < len("basic")+1+8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true // Unicode case folding: leave it to the pattern
		}
	}
	l := strings.ToLower(s)
	return strings.Contains(l, "bearer") || strings.Contains(l, "basic")
}

// replaceRuns masks the matches of re for which secret is true, or for which
// secretAt is true given the text around the match, except a digest's hex
// ("sha256:" or "sha512:" right before the run).
func replaceRuns(s string, re *regexp.Regexp, secret func(string) bool, secretAt func(before, run, after string) bool) string {
	locs := re.FindAllStringIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		run := s[l[0]:l[1]]
		before := s[:l[0]]
		if strings.HasSuffix(before, "sha256:") || strings.HasSuffix(before, "sha512:") || strings.HasSuffix(before, "sha256-") {
			continue
		}
		if !secret(run) && (secretAt == nil || !secretAt(before, run, s[l[1]:])) {
			continue
		}
		b.WriteString(s[last:l[0]])
		b.WriteString(Redacted)
		last = l[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// mixedCase reports whether a run has a digit, an upper-case and a
// lower-case letter: random base64 has all three, words rarely do.
func mixedCase(run string) bool {
	return hasDigit(run) && strings.ContainsAny(run, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
		strings.ContainsAny(run, "abcdefghijklmnopqrstuvwxyz")
}

// awsSecretKey recognises an AWS secret access key: exactly 40 characters of
// base64 (with "/" and "+"), mixed case with a digit, standing alone (at the
// start or after a space, "=", ":", a quote, a comma or an opening bracket;
// at the end or before a space, a quote, "&", ",", ";" or a closing
// bracket), and not a path (no leading "/"). A
// key without "/" or "+" is a base64 run and is masked anyway.
func awsSecretKey(before, run, after string) bool {
	if len(run) != 40 || run[0] == '/' || !mixedCase(run) {
		return false
	}
	if before != "" && !strings.ContainsRune(" \t\n=:\"',([", rune(before[len(before)-1])) {
		return false
	}
	return after == "" || strings.ContainsRune(" \t\n\"'&,;)]", rune(after[0]))
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func hasLetter(s string) bool {
	return strings.ContainsAny(s, "abcdefABCDEF")
}

// RedactInto redacts s with Redact, records one adapter.Redaction per
// reason at locator in f, and returns the redacted value. Adapters pass
// every string that becomes a finding or a property through it.
func RedactInto(s, locator string, f *adapter.Findings) string {
	out, reasons := Redact(s)
	for _, r := range reasons {
		f.Redactions = append(f.Redactions, adapter.Redaction{Locator: locator, Reason: r})
	}
	return out
}

// redactURLs masks the credentials URLs and locations carry:
//
//   - the user-info of every "scheme://user-info@host" URL, removed whole up
//     to the last "@" of the authority: a password holding "@" or "/"
//     ("s3://AKIA…:wJalr/K7…@bucket/x") is masked entirely. An "@" after
//     the first "/" that follows a segment without ":" is a path's, not
//     user-info ("hf://org/model@main" is left alone);
//   - the "user:password@host:" of scp and NFS style locations;
//   - query and fragment parameters whose name looks secret (IsSecretName,
//     "hf_token", "access-token") or is a well-known credential parameter
//     ("sig", "X-Amz-Signature", ...).
func redactURLs(s string) string {
	var b strings.Builder
	rest := s
	for {
		loc := urlStart.FindStringIndex(rest)
		if loc == nil {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:loc[1]])
		rest = rest[loc[1]:]
		// The URL runs to the next white space or quote.
		end := strings.IndexAny(rest, " \t\r\n\"'")
		if end < 0 {
			end = len(rest)
		}
		body := rest[:end]
		if at := userInfoEnd(body); at > 0 {
			b.WriteString(Redacted)
			body = body[at:]
		}
		b.WriteString(body)
		rest = rest[end:]
	}
	out := scpUserInfo.ReplaceAllStringFunc(b.String(), func(m string) string {
		sub := scpUserInfo.FindStringSubmatch(m)
		if host := strings.ToLower(sub[2]); host == "sha256:" || host == "sha512:" {
			return m // an image digest ("registry:5000/x@sha256:…"), not a host
		}
		return sub[1] + Redacted + "@" + sub[2]
	})
	out = urlSecretParam.ReplaceAllString(out, "${1}"+Redacted)
	out = urlParam.ReplaceAllStringFunc(out, func(m string) string {
		sub := urlParam.FindStringSubmatch(m)
		if IsSecretName(sub[2]) && sub[3] != "" && sub[3] != Redacted {
			return sub[1] + sub[2] + "=" + Redacted
		}
		return m
	})
	return out
}

// userInfoEnd returns the index of the "@" that ends the user-info of a URL
// body (what follows "scheme://"), or 0 when it has none. The authority is
// taken to run to the last "@" before the path, where the part before that
// "@" either holds no "/" or holds a ":" (a password may hold "/" or "@").
func userInfoEnd(body string) int {
	// Without any "@" there is no user-info.
	stop := strings.IndexAny(body, "?#")
	if stop < 0 {
		stop = len(body)
	}
	at := strings.LastIndexByte(body[:stop], '@')
	if at <= 0 {
		return 0
	}
	info := body[:at]
	slash := strings.IndexByte(info, '/')
	if slash >= 0 && !strings.Contains(info[:slash], ":") {
		// "org/model@main": the "@" is in the path. The user-info, if
		// any, ends before the first "/".
		first := strings.IndexByte(info[:slash], '@')
		if first <= 0 {
			return 0
		}
		return first
	}
	return at
}
