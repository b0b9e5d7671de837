package catalogue

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// ParseAge reads a min_age: a whole number of days ("3d"), a Go duration
// ("36h", "90m"), or both ("1d12h"); "0" is none. Negative ages are not
// ages.
func ParseAge(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	m := ageRe.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not an age", s)
	}
	var d time.Duration
	if m[1] != "" {
		days, err := strconv.Atoi(m[1])
		if err != nil || days > 100*365 {
			return 0, fmt.Errorf("%q is not an age", s)
		}
		d = time.Duration(days) * 24 * time.Hour
	}
	if m[2] != "" {
		rest, err := time.ParseDuration(m[2])
		if err != nil || rest < 0 {
			return 0, fmt.Errorf("%q is not an age", s)
		}
		d += rest
	}
	if m[1] == "" && m[2] == "" {
		return 0, fmt.Errorf("%q is not an age", s)
	}
	return d, nil
}

var ageRe = regexp.MustCompile(`^(?:(\d+)d)?([0-9][0-9a-zµ.]*)?$`)

// FormatAge writes an age as min_age takes it: whole days as "3d", the
// rest as a Go duration ("1d12h0m0s" is written "1d12h0m0s").
func FormatAge(d time.Duration) string {
	day := 24 * time.Hour
	switch {
	case d <= 0:
		return "0"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	case d > day:
		return fmt.Sprintf("%dd%s", d/day, d%day)
	}
	return d.String()
}

// minAge reads a min_age attribute of what (a module, or the catalogue).
func minAge(a *hcl.Attribute, what string, dst *time.Duration) hcl.Diagnostics {
	var text string
	diags := str(a, &text)
	if diags.HasErrors() {
		return diags
	}
	d, err := ParseAge(text)
	if err != nil {
		return append(diags, errorf(a.Expr.Range(), "Invalid min_age", "min_age of %s is %q: write how old an upstream tag must be before pin takes it, in days or as a duration, such as \"3d\", \"36h\" or \"1d12h\" (\"0\": no wait).", what, text))
	}
	*dst = d
	return diags
}

// catalogueMinAge reads a file's top-level min_age, the default of every
// track-upstream module that does not say its own; it may be said once
// in a catalogue.
func (l *loader) catalogueMinAge(a *hcl.Attribute) hcl.Diagnostics {
	if a == nil {
		return nil
	}
	if l.minAgeAt != nil {
		return hcl.Diagnostics{errorf(a.Range, "Duplicate min_age", "The catalogue's min_age is set already at %s. Keep one: it is the default of every track-upstream module.", l.minAgeAt)}
	}
	r := a.Range
	l.minAgeAt = &r
	return minAge(a, "the catalogue", &l.c.MinAge)
}

// inheritMinAge gives every track-upstream module that says no min_age
// the catalogue's.
func (l *loader) inheritMinAge() {
	for _, m := range l.c.Modules {
		if m.Policy == TrackUpstream && !m.minAgeSet {
			m.MinAge = l.c.MinAge
		}
	}
}
