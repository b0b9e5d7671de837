package propose

import (
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/git"
)

// Redacted stands for a credential in what pin prints.
const Redacted = git.Redacted

// Redactor removes credentials from what propose prints, writes and
// returns: the user information of any URL, and each secret it was given
// (the parts of a remote's URL, a token) wherever it appears, escaped or
// not.
type Redactor struct {
	secrets []string
}

// Minimum lengths of what is replaced wherever it appears: shorter
// strings ("git", "x") are words of the output too; a URL's user
// information is replaced whatever its length.
const (
	minSecret   = 4
	minUserName = 8
)

// NewRedactor redacts the credentials of urls (a password, or a user
// name standing alone, which is then a token) and tokens.
func NewRedactor(urls, tokens []string) *Redactor {
	r := &Redactor{}
	add := func(s string, min int) {
		if len(s) >= min && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
		if esc := url.QueryEscape(s); esc != s && len(s) >= min && !slices.Contains(r.secrets, esc) {
			r.secrets = append(r.secrets, esc)
		}
	}
	for _, u := range urls {
		p, err := url.Parse(strings.TrimSpace(u))
		if err != nil || p.User == nil {
			continue
		}
		if pw, ok := p.User.Password(); ok {
			add(pw, minSecret)
			continue
		}
		add(p.User.Username(), minUserName)
	}
	for _, t := range tokens {
		add(strings.TrimSpace(t), minSecret)
	}
	// The longest first, so that a secret inside another goes with it.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return r
}

// String is s without credentials.
func (r *Redactor) String(s string) string {
	s = git.RedactURL(s)
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	return s
}

// Writer writes through to w without credentials. Each Write is redacted
// on its own: pin writes whole lines.
func (r *Redactor) Writer(w io.Writer) io.Writer { return redactWriter{r: r, w: w} }

type redactWriter struct {
	r *Redactor
	w io.Writer
}

func (rw redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(rw.w, rw.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Error is err, its message without credentials; errors.Is and errors.As
// still see what it wraps.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return redactedError{err: err, msg: r.String(err.Error())}
}

type redactedError struct {
	err error
	msg string
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }
