package sink

import (
	"net/url"
	"strings"
)

// A sink's URL is a credential: chat-style webhooks carry the secret in the
// path, others in the query, the fragment or the user information. Nothing
// but the scheme, the host and the port of a sink URL reaches a status, a
// log, an Event, a metric or an error message (docs/sinks.md, SECURITY.md).

// RedactURL returns the origin of a URL, "scheme://host[:port]", or
// "(invalid URL)": never its user information, path, query or fragment.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "(invalid URL)"
	}
	return u.Scheme + "://" + u.Host
}

// Scrubber removes a sink URL's secret parts from any text (an error of a
// library that quotes the URL it was given, say): the URL in full and each
// of its user, password, path, query and fragment, raw and escaped.
type Scrubber struct {
	urls    []string // replaced by their origin
	secrets []string // replaced by "[redacted]"
}

// NewScrubber returns a scrubber of the secret parts of the given URLs.
func NewScrubber(urls ...string) *Scrubber {
	s := &Scrubber{}
	add := func(v string) {
		if len(v) >= 4 { // a shorter part ("/", "v1") is no secret worth mangling text for
			s.secrets = append(s.secrets, v)
		}
	}
	for _, raw := range urls {
		if raw != "" {
			s.urls = append(s.urls, raw)
		}
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		if u.User != nil {
			add(u.User.String())
			add(u.User.Username())
			if p, ok := u.User.Password(); ok {
				add(p)
			}
		}
		for _, v := range []string{u.Path, u.RawPath, u.EscapedPath(), u.RawQuery, u.Fragment, u.EscapedFragment()} {
			add(strings.TrimPrefix(v, "/"))
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v)
			}
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if len(seg) >= 8 { // a token, not a word such as "services"
				add(seg)
			}
		}
	}
	// Longest first, so that a part inside another is not left behind.
	for i := 1; i < len(s.secrets); i++ {
		for j := i; j > 0 && len(s.secrets[j]) > len(s.secrets[j-1]); j-- {
			s.secrets[j], s.secrets[j-1] = s.secrets[j-1], s.secrets[j]
		}
	}
	return s
}

// Scrub replaces every URL in text with its origin, then every secret part
// left with "[redacted]".
func (s *Scrubber) Scrub(text string) string {
	if s == nil {
		return text
	}
	for _, u := range s.urls {
		text = strings.ReplaceAll(text, u, RedactURL(u))
	}
	for _, v := range s.secrets {
		text = strings.ReplaceAll(text, v, "[redacted]")
	}
	return text
}

// scrubbing is implemented by sinks whose configuration holds a URL.
type scrubbing interface {
	scrubber() *Scrubber
}
