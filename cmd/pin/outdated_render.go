package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/resolve"
)

// ANSI colours of the table's status column.
const (
	colorRed    = "\x1b[31m"
	colorYellow = "\x1b[33m"
	colorGreen  = "\x1b[32m"
	colorReset  = "\x1b[0m"
)

// writeOutdatedTable renders the report for people: one row per module
// (more lines when it runs in several places), the findings in words, and
// a summary. Every text from outside (names, tags, messages) is sanitised;
// with color, statuses in failOn are red, other findings yellow, current
// green.
func writeOutdatedTable(w io.Writer, out outdatedOutput, failOn []resolve.Status, color bool) {
	header := []string{"MODULE", "LOCKED", "RUNNING", "UPSTREAM", "STATUS"}
	type line struct {
		cells    [4]string
		statuses []string
	}
	var lines []line
	for _, m := range out.Modules {
		locked := "(none)"
		if m.Locked != nil {
			locked = label(m.Locked.Tag, image.Short(m.Locked.Digest), m.Locked.Version, m.Locked.Created)
		}
		var running []string
		for _, r := range m.Running {
			ref := label(r.Tag, image.Short(r.Digest), r.Version, r.Created)
			if r.Digest == "" && r.Version == "" {
				ref = strings.TrimSpace(r.Tag + " image ID " + image.Short(r.ImageID))
			}
			running = append(running, fmt.Sprintf("%s/%s %s%s", r.Host, r.Container, ref, orderNote(r.Order)))
		}
		for _, miss := range m.Missing {
			running = append(running, miss+" not found")
		}
		if len(running) == 0 {
			running = []string{"-"}
		}
		upstream := "-"
		if u := m.Upstream; u != nil {
			upstream = label(u.Tag, image.Short(u.Digest), u.Version, u.Created) + orderNote(u.Order)
		}
		for i, r := range running {
			l := line{cells: [4]string{"", "", r, ""}}
			if i == 0 {
				l.cells = [4]string{m.label(), locked, r, upstream}
				l.statuses = m.Statuses
			}
			for j := range l.cells {
				l.cells[j] = sanitize(l.cells[j])
			}
			lines = append(lines, l)
		}
	}
	var width [4]int
	for j := range width {
		width[j] = utf8.RuneCountInString(header[j])
		for _, l := range lines {
			width[j] = max(width[j], utf8.RuneCountInString(l.cells[j]))
		}
	}
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-utf8.RuneCountInString(s)+2) }
	for j := range 4 {
		fmt.Fprint(w, pad(header[j], width[j]))
	}
	fmt.Fprintln(w, header[4])
	for _, l := range lines {
		var b strings.Builder
		for j := range 4 {
			b.WriteString(pad(l.cells[j], width[j]))
		}
		var st []string
		for _, s := range l.statuses {
			st = append(st, paint(s, failOn, color))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String()+strings.Join(st, ", "), " "))
	}

	var notes []string
	for _, m := range out.Modules {
		for _, f := range m.Findings {
			notes = append(notes, sanitize(fmt.Sprintf("%s: %s: %s", m.label(), f.Status, f.Message)))
		}
		if m.Hint != "" {
			notes = append(notes, sanitize(fmt.Sprintf("%s: hint: %s", m.label(), hintText(m))))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, summary(out, failOn))
}

// orderNote says how an image stands against the locked one.
func orderNote(order string) string {
	switch order {
	case "":
		return ""
	case "equal":
		return " (same)"
	}
	return " (" + order + ")"
}

func paint(status string, failOn []resolve.Status, color bool) string {
	if !color {
		return status
	}
	c := colorYellow
	switch {
	case status == string(resolve.StatusCurrent):
		c = colorGreen
	case slices.Contains(failOn, resolve.Status(status)):
		c = colorRed
	}
	return c + status + colorReset
}

func hintText(m outdatedModule) string {
	return fmt.Sprintf("%s is newer than every tag within the constraint %q", m.Hint, m.constraint)
}

// summary counts modules by status and names those that fail.
func summary(out outdatedOutput, failOn []resolve.Status) string {
	counts := map[string]int{}
	var failing []string
	for _, m := range out.Modules {
		for _, s := range m.Statuses {
			counts[s]++
		}
		if len(failingStatuses(m.Statuses, failOn)) > 0 {
			failing = append(failing, m.label())
		}
	}
	var parts []string
	for _, st := range resolve.Statuses {
		if n := counts[string(st)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	s := "1 module"
	if len(out.Modules) != 1 {
		s = fmt.Sprintf("%d modules", len(out.Modules))
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	s += "."
	switch {
	case len(failOn) == 0:
		s += " Nothing fails (--fail-on none)."
	case len(failing) > 0:
		s += fmt.Sprintf(" Failing on %s: %s.", strings.Join(statusStrings(failOn), ", "), strings.Join(failing, ", "))
	default:
		s += fmt.Sprintf(" Nothing in --fail-on (%s).", strings.Join(statusStrings(failOn), ", "))
	}
	return sanitize(s)
}

// writeAnnotations prints GitHub Actions workflow commands: an error for
// each finding whose status is in failOn, a warning for the others, a
// notice for a hint; each placed on the module's line in the catalogue.
// Then the summary, as a plain line.
func writeAnnotations(w io.Writer, out outdatedOutput, failOn []resolve.Status) {
	wd, _ := os.Getwd()
	for _, m := range out.Modules {
		props := annotationFile(m, wd)
		for _, f := range m.Findings {
			level := "warning"
			if slices.Contains(failOn, resolve.Status(f.Status)) {
				level = "error"
			}
			fmt.Fprintf(w, "::%s %stitle=%s::%s\n", level, props, escapeProperty(sanitize(m.label()+": "+f.Status)), escapeData(sanitize(f.Message)))
		}
		if m.Hint != "" {
			fmt.Fprintf(w, "::notice %stitle=%s::%s\n", props, escapeProperty(sanitize(m.label()+": hint")), escapeData(sanitize(hintText(m))))
		}
	}
	fmt.Fprintln(w, escapeData(summary(out, failOn)))
}

// annotationFile is "file=…,line=…," for the module's declaration, the
// path relative to the working directory as GitHub expects; empty when
// the catalogue lies outside it.
func annotationFile(m outdatedModule, wd string) string {
	if m.file == "" {
		return ""
	}
	p := m.file
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(wd, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return ""
		}
		p = rel
	}
	return fmt.Sprintf("file=%s,line=%d,", escapeProperty(filepath.ToSlash(p)), m.line)
}

// escapeData escapes an annotation's message as GitHub's workflow command
// parser requires, so that a hostile text cannot end the command or start
// another: %, CR and LF.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a property value (title, file): also ":" and ",".
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// useColor: colour only on a terminal, and never when NO_COLOR is set
// (https://no-color.org: present and not empty).
