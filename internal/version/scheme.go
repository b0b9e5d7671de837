package version

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind names a versioning scheme.
type Kind string

const (
	SemVer  Kind = "semver"
	CalVer  Kind = "calver"
	Numeric Kind = "numeric"
	Regex   Kind = "regex"
)

// Scheme is a parsed versioning scheme. The zero value is SemVer.
type Scheme struct {
	Kind Kind
	re   *regexp.Regexp
	src  string
}

// ParseScheme parses "semver", "calver", "numeric" or "regex:<expr>". An
// empty string is "semver".
func ParseScheme(s string) (Scheme, error) {
	switch {
	case s == "" || s == string(SemVer):
		return Scheme{Kind: SemVer}, nil
	case s == string(CalVer):
		return Scheme{Kind: CalVer}, nil
	case s == string(Numeric):
		return Scheme{Kind: Numeric}, nil
	case strings.HasPrefix(s, "regex:"):
		expr := strings.TrimPrefix(s, "regex:")
		re, err := regexp.Compile(expr)
		if err != nil {
			return Scheme{}, fmt.Errorf("invalid regular expression: %w", err)
		}
		if re.SubexpIndex("version") < 0 {
			return Scheme{}, fmt.Errorf("regular expression %q has no named group (?P<version>…)", expr)
		}
		return Scheme{Kind: Regex, re: re, src: s}, nil
	}
	return Scheme{}, fmt.Errorf("unknown versioning scheme %q", s)
}

// String returns the scheme as written in a catalogue.
func (s Scheme) String() string {
	if s.Kind == Regex {
		return s.src
	}
	if s.Kind == "" {
		return string(SemVer)
	}
	return string(s.Kind)
}
