package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

// defaultFailOn are the statuses that fail "pin outdated" unless --fail-on
// says otherwise: those that mean a cutover to the lock could downgrade, or
// that pin could not tell.
const defaultFailOn = "behind-running,unknown-order,skew,error"

type outdatedOptions struct {
	*globalOptions
	// Format shadows the global --format: outdated also speaks GitHub
	// workflow annotations, which no other command does, so it declares
	// its own flag rather than widening the global check in root.go.
	Format string
	FailOn string
}

func newOutdatedCmd(g *globalOptions, s streams) *cobra.Command {
	o := &outdatedOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "outdated",
		Short: "Report modules whose lock is behind what runs or what upstream offers",
		Long: `outdated compares, for every module, the current lock entry with what the
hosts run and with the newest upstream candidate within the module's policy,
and gives each module its statuses:

  behind-running   a host runs something newer than the lock: a cutover to
                   the lock would be a downgrade
  unknown-order    what runs, or the upstream candidate, cannot be ordered
                   against the lock
  skew             the hosts run different images
  error            a host or registry failed for the module (with the reason)
  unlocked         the lock has no entry for the module yet
  behind-upstream  upstream offers something newer within the policy
  current          none of these

It writes nothing. It exits 1 when a status in --fail-on occurs, 2 on bad
input and 3 when a host or registry could not be reached at all.
--format github prints GitHub Actions workflow annotations: errors for the
statuses in --fail-on, warnings for the others.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOutdated(cmd.Context(), o, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "table", "output format: table, json or github (workflow annotations)")
	f.StringVar(&o.FailOn, "fail-on", defaultFailOn, `statuses that make the exit code 1, comma-separated; "any" or "none"`)
	return cmd
}

// parseFailOn reads --fail-on: statuses, or "any" (every status but
// current) or "none".
func parseFailOn(s string) ([]resolve.Status, error) {
	var findings []string
	for _, st := range resolve.Statuses {
		if st != resolve.StatusCurrent {
			findings = append(findings, string(st))
		}
	}
	bad := func(why string) error {
		return withCode(exitInput, fmt.Errorf("--fail-on %q: %s; write a comma-separated list of %s, or \"any\" or \"none\"", s, why, strings.Join(findings, ", ")))
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	if len(parts) == 1 {
		switch parts[0] {
		case "none":
			return []resolve.Status{}, nil
		case "any":
			parts = findings
		}
	}
	var out []resolve.Status
	for _, p := range parts {
		switch {
		case p == "":
			return nil, bad("an empty status")
		case p == "any" || p == "none":
			return nil, bad(p + " stands alone")
		case p == string(resolve.StatusCurrent):
			return nil, bad("current is not a finding")
		case !slices.Contains(findings, p):
			return nil, bad(fmt.Sprintf("unknown status %q", p))
		}
		if !slices.Contains(out, resolve.Status(p)) {
			out = append(out, resolve.Status(p))
		}
	}
	slices.SortFunc(out, func(a, b resolve.Status) int {
		return slices.Index(resolve.Statuses, a) - slices.Index(resolve.Statuses, b)
	})
	return out, nil
}

func runOutdated(ctx context.Context, o *outdatedOptions, s streams) error {
	if !slices.Contains([]string{"table", "json", "github"}, o.Format) {
		return withCode(exitInput, fmt.Errorf("--format %q: write table, json or github", o.Format))
	}
	failOn, err := parseFailOn(o.FailOn)
	if err != nil {
		return err
	}
	prog := &progress{w: s.Err, on: o.Format != "json" && isTerminal(s.Err)}
	in, err := load(ctx, o.globalOptions, s, "", prog)
	if err != nil {
		return err
	}
	seen := in.Observed
	reports := resolve.Outdated(ctx, resolve.Input{
		Catalogue: in.Catalogue,
		Old:       in.Lock,
		Observed:  seen,
		Registry:  in.Registries.For,
		Now:       o.now(),
	}, prog.moduleDone)
	prog.clear()
	requestSummary(o.globalOptions, s, in.Registries)

	out := outdatedReport(reports, o, failOn)
	switch o.Format {
	case "json":
		err = writeJSON(s.Out, out)
	case "github":
		var b strings.Builder
		writeAnnotations(&b, out, failOn)
		_, err = io.WriteString(s.Out, b.String())
	default:
		var b strings.Builder
		writeOutdatedTable(&b, out, failOn, useColor(s.Out))
		_, err = io.WriteString(s.Out, b.String())
	}
	if err != nil {
		return err
	}
	if msgs := unreachable(seen, reports); len(msgs) > 0 {
		return withCode(exitSource, errors.New(strings.Join(msgs, "; ")))
	}
	for _, r := range reports {
		for _, err := range r.Failures {
			if badInput(err) {
				return withCode(exitInput, err)
			}
		}
	}
	var failing []string
	for _, m := range out.Modules {
		if hit := failingStatuses(m.Statuses, failOn); len(hit) > 0 {
			failing = append(failing, fmt.Sprintf("%q (%s)", m.Name, strings.Join(hit, ", ")))
		}
	}
	if len(failing) > 0 {
		return withCode(exitFindings, fmt.Errorf("module %s: a status in --fail-on (%s)", joinAnd(failing), strings.Join(statusStrings(failOn), ",")))
	}
	return nil
}

// unreachable lists the hosts and registries that could not be read at all,
// each once: they make the exit code 3.
func unreachable(seen observe.Observed, reports []*resolve.ModuleStatus) []string {
	var msgs []string
	for _, name := range slices.Sorted(maps.Keys(seen.Errors)) {
		if err := seen.Errors[name]; observe.Unreachable(err) {
			msgs = append(msgs, (&observe.SourceError{Source: "host " + name, Err: err}).Error())
		}
	}
	for _, r := range reports {
		for _, err := range r.Failures {
			var se *observe.SourceError
			if observe.Unreachable(err) && errors.As(err, &se) && !slices.Contains(msgs, se.Error()) {
				msgs = append(msgs, se.Error())
			}
		}
	}
	return msgs
}

// outdatedOutput is the report, as JSON (schema 1) and as the source of the
// table and the annotations.
type outdatedOutput struct {
	Schema    int              `json:"schema"`
	Command   string           `json:"command"`
	Catalogue string           `json:"catalogue"`
	Lock      string           `json:"lock"`
	FailOn    []string         `json:"fail_on"`
	Failed    bool             `json:"failed"`
	Modules   []outdatedModule `json:"modules"`
}

type outdatedModule struct {
	Name     string            `json:"name"`
	Policy   string            `json:"policy"`
	Statuses []string          `json:"statuses"`
	Locked   *outdatedImage    `json:"locked"`
	Running  []outdatedRunning `json:"running"`
	Missing  []string          `json:"missing,omitempty"`
	Upstream *outdatedImage    `json:"upstream"`
	Hint     string            `json:"hint,omitempty"`
	Findings []outdatedFinding `json:"findings"`
	Error    string            `json:"error,omitempty"`

	// where the module is declared, for annotations
	file       string
	line       int
	constraint string
}

type outdatedImage struct {
	Tag     string `json:"tag,omitempty"`
	Digest  string `json:"digest"`
	Version string `json:"version,omitempty"`
	Created string `json:"created,omitempty"`
	// Order and Rule: the upstream candidate against the locked image.
	Order string `json:"order,omitempty"`
	Rule  string `json:"rule,omitempty"`
}

type outdatedRunning struct {
	Host      string `json:"host"`
	Container string `json:"container"`
	Tag       string `json:"tag,omitempty"`
	Digest    string `json:"digest,omitempty"`
	ImageID   string `json:"image_id,omitempty"`
	Version   string `json:"version,omitempty"`
	Created   string `json:"created,omitempty"`
	// Order and Rule: the running image against the locked one.
	Order string `json:"order,omitempty"`
	Rule  string `json:"rule,omitempty"`
}

type outdatedFinding struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func outdatedReport(reports []*resolve.ModuleStatus, o *outdatedOptions, failOn []resolve.Status) outdatedOutput {
	out := outdatedOutput{Schema: JSONSchema, Command: "outdated", Catalogue: o.Catalogue, Lock: o.Lock, FailOn: statusStrings(failOn), Modules: []outdatedModule{}}
	for _, r := range reports {
		m := outdatedModule{Name: r.Module.Name, Policy: string(r.Module.Policy), Statuses: statusStrings(r.Statuses), Missing: r.Missing, Hint: r.Hint,
			Running: []outdatedRunning{}, Findings: []outdatedFinding{},
			file: r.Module.DeclRange.Filename, line: r.Module.DeclRange.Start.Line, constraint: r.Module.ConstraintText}
		if l := r.Locked; l != nil {
			m.Locked = &outdatedImage{Tag: l.Tag, Digest: l.Digest, Version: l.Version, Created: resolve.Created(l.Created)}
		}
		for _, rs := range r.Running {
			run := outdatedRunning{Host: rs.Host, Container: rs.Container, Tag: rs.Image.Tag, Digest: rs.Image.Digest, ImageID: rs.Image.ImageID,
				Version: rs.Version, Created: resolve.Created(rs.Created)}
			if r.Locked != nil {
				run.Order, run.Rule = rs.Order.Cmp.String(), string(rs.Order.Rule)
			}
			m.Running = append(m.Running, run)
		}
		if u := r.Upstream; u != nil {
			m.Upstream = &outdatedImage{Tag: u.Image.Tag, Digest: u.Image.Digest, Version: u.Version, Created: resolve.Created(u.Created)}
			if r.Locked != nil {
				m.Upstream.Order, m.Upstream.Rule = u.Order.Cmp.String(), string(u.Order.Rule)
			}
		}
		for _, f := range r.Findings {
			m.Findings = append(m.Findings, outdatedFinding{Status: string(f.Status), Message: f.Message})
		}
		if len(r.Failures) > 0 {
			m.Error = errors.Join(r.Failures...).Error()
		}
		out.Failed = out.Failed || len(failingStatuses(m.Statuses, failOn)) > 0
		out.Modules = append(out.Modules, m)
	}
	return out
}

func statusStrings(ss []resolve.Status) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, string(s))
	}
	return out
}

func failingStatuses(statuses []string, failOn []resolve.Status) []string {
	var hit []string
	for _, st := range statuses {
		if slices.Contains(failOn, resolve.Status(st)) {
			hit = append(hit, st)
		}
	}
	return hit
}

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
			locked = refText(m.Locked.Tag, m.Locked.Digest)
		}
		var running []string
		for _, r := range m.Running {
			ref := refText(r.Tag, r.Digest)
			if r.Digest == "" {
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
			upstream = refText(u.Tag, u.Digest) + orderNote(u.Order)
		}
		for i, r := range running {
			l := line{cells: [4]string{"", "", r, ""}}
			if i == 0 {
				l.cells = [4]string{m.Name, locked, r, upstream}
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
			notes = append(notes, sanitize(fmt.Sprintf("%s: %s: %s", m.Name, f.Status, f.Message)))
		}
		if m.Hint != "" {
			notes = append(notes, sanitize(fmt.Sprintf("%s: hint: %s", m.Name, hintText(m))))
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
			failing = append(failing, m.Name)
		}
	}
	var parts []string
	for _, st := range resolve.Statuses {
		if n := counts[string(st)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	s := fmt.Sprintf("%d modules", len(out.Modules))
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
			fmt.Fprintf(w, "::%s %stitle=%s::%s\n", level, props, escapeProperty(sanitize(m.Name+": "+f.Status)), escapeData(sanitize(f.Message)))
		}
		if m.Hint != "" {
			fmt.Fprintf(w, "::notice %stitle=%s::%s\n", props, escapeProperty(sanitize(m.Name+": hint")), escapeData(sanitize(hintText(m))))
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
func useColor(w io.Writer) bool { return isTerminal(w) && os.Getenv("NO_COLOR") == "" }

// isTerminal reports whether w is a terminal (a character device).
// golang.org/x/term is not a requirement of the module, and a character
// device is all the colour and progress decisions need.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress is the one-line count of hosts and modules done, redrawn on a
// terminal's stderr and erased at the end. Off, it does nothing.
type progress struct {
	w                     io.Writer
	on                    bool
	mu                    sync.Mutex
	hosts, hostsTotal     int
	modules, modulesTotal int
}

func (p *progress) loaded(c *catalogue.Catalogue) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hostsTotal, p.modulesTotal = len(c.Hosts), len(c.Modules)
}

func (p *progress) hostDone(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hosts, p.hostsTotal = done, total
	p.draw()
}

func (p *progress) moduleDone(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.modules, p.modulesTotal = done, total
	p.draw()
}

func (p *progress) draw() {
	if p.on {
		fmt.Fprintf(p.w, "\r\x1b[Kpin outdated: hosts %d/%d, modules %d/%d", p.hosts, p.hostsTotal, p.modules, p.modulesTotal)
	}
}

func (p *progress) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
