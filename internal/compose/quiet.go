package compose

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/pin-tool/pin/internal/imageref"
)

// compose-go's errors quote what they read, and a Compose file names the
// files it is read with: env_file, label_file, .env, include, extends. A
// hostile Compose file (a pull request, in CI) could so make pin print a
// line of any file the runner can read into a public log. What pin says
// of compose-go's errors keeps their file and line and compose-go's own
// words, never the content of another file:
//
//   - an env or label file's error ("failed to read PATH: line N: …")
//     becomes PATH:N and a description in pin's words, chosen by what
//     compose-go said, never its text;
//   - in any other error and in warnings, a quoted run ("…", '…', `…`)
//     stays only when it is text of the Compose files given (it is theirs
//     to show) or one punctuation character; any other is replaced by
//     "…", as is everything after a quote that does not close;
//   - an image that is not a valid reference once interpolated is shown
//     as written, not as interpolated.

// envFileErr is compose-go's error for an env-format file (env_file,
// label_file, .env): dotenv's "failed to read PATH: [line N: ]MSG".
var envFileErr = regexp.MustCompile(`(?s)failed to read (.+?): (?:line (\d+): )?(.*)`)

// yamlFileErr is compose-go's error for another Compose file (include,
// extends): "failed to parse PATH: yaml: … line N: MSG".
var yamlFileErr = regexp.MustCompile(`(?s)failed to parse (.+?): yaml: (?:.*?)line (\d+): (.*)`)

// envFileFaults describe, in pin's words, what dotenv found wrong, by
// the words of its message (never quoted: dotenv quotes the line).
var envFileFaults = []struct{ says, means string }{
	{"unterminated quoted value", "a quoted value is still open where the file ends"},
	{"unexpected character", "a variable name holds a character other than letters, digits, _ . - [ ]"},
	{"key cannot contain a space", "a variable name holds a space"},
	{"zero length string", "a line has no variable name"},
	{"Invalid template", "a ${…} in a value is not a valid substitution"},
}

// quiet is err as pin says it: see above. files are the Compose files
// given, in order, and srcs their text by path.
func quiet(err error, files []string, srcs map[string][]byte) *Error {
	msg := err.Error()
	if m := envFileErr.FindStringSubmatch(msg); m != nil {
		what := "compose-go's message is not shown, as it may quote the file"
		for _, f := range envFileFaults {
			if strings.Contains(m[3], f.says) {
				what = f.means
				break
			}
		}
		line, _ := strconv.Atoi(m[2])
		return &Error{File: m[1], Line: line, Err: fmt.Errorf("%w: not a valid env file: %s (its lines are not shown: env files hold secrets); write NAME=value lines", ErrBadInput, what)}
	}
	if m := yamlFileErr.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[2])
		return &Error{File: m[1], Line: line, Err: fmt.Errorf("%w: not valid YAML: %s", ErrBadInput, quietText(m[3], srcs))}
	}
	e := &Error{Err: fmt.Errorf("%w: %w", ErrBadInput, quietError{msg: quietText(msg, srcs), err: err})}
	if m := interpolationErr.FindStringSubmatch(msg); m != nil {
		e.File, e.Line = lineOfPath(files, srcs, strings.Split(m[1], "."))
	}
	return e
}

// interpolationErr is compose-go's error for a value that is not what its
// attribute takes once interpolated: "error while interpolating
// services.web.cpus: …".
var interpolationErr = regexp.MustCompile(`error while interpolating ([^:\s]+):`)

// lineOfPath finds the attribute at path (services, web, cpus) in the
// Compose files given, the last that sets it winning as when they are
// merged; "", 0 when none does (an included or extended file's).
func lineOfPath(files []string, srcs map[string][]byte, path []string) (string, int) {
	b := (&yaml.PathBuilder{}).Root()
	for _, k := range path {
		b = b.Child(k)
	}
	p := b.Build()
	var file string
	var line int
	for _, f := range files {
		parsed, err := imageref.Parse(f, srcs[f])
		if err != nil {
			continue
		}
		if n, err := p.FilterFile(parsed); err == nil && n != nil && n.GetToken() != nil && n.GetToken().Position != nil {
			file, line = f, n.GetToken().Position.Line
		}
	}
	return file, line
}

// quietError is an error said with quietText, unwrapping to the original.
type quietError struct {
	msg string
	err error
}

func (e quietError) Error() string { return e.msg }
func (e quietError) Unwrap() error { return e.err }

// quietText replaces each quoted run of s that is not text of srcs with
// "…" (in its quotes), and the rest of a line after a quote that does not
// close.
func quietText(s string, srcs map[string][]byte) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		q := s[i]
		if q != '"' && q != '\'' && q != '`' || (q == '\'' && i > 0 && isWordByte(s[i-1])) {
			b.WriteByte(q)
			i++
			continue
		}
		end := closing(s, i)
		if end < 0 {
			// Unclosed: the rest of the line may be anything.
			b.WriteString(string(q) + "…")
			if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 {
				i += nl
			} else {
				i = len(s)
			}
			continue
		}
		quoted := s[i : end+1]
		inner := quoted[1 : len(quoted)-1]
		if q == '"' {
			if u, err := strconv.Unquote(quoted); err == nil {
				inner = u
			}
		}
		if inner != "" && (inSources(inner, srcs) || punctuation(inner)) {
			b.WriteString(quoted)
		} else {
			b.WriteString(string(q) + "…" + string(q))
		}
		i = end + 1
	}
	return b.String()
}

// closing is the index of the quote that closes the one at s[i], on the
// same line (a double quote's backslash escapes skipped), or -1.
func closing(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\n':
			return -1
		case q == '"' && s[j] == '\\':
			j++
		case s[j] == q:
			return j
		}
	}
	return -1
}

// punctuation reports whether s is one character that is neither a
// letter nor a digit: YAML's "did not find expected ',' or ']'" says
// nothing of a file's content.
func punctuation(s string) bool {
	return len(s) == 1 && !isWordByte(s[0]) && s[0] > ' ' && s[0] < 0x7f
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func inSources(s string, srcs map[string][]byte) bool {
	for _, b := range srcs {
		if strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}
