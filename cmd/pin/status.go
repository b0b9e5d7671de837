package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/promote"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// defaultStatusFailOn are the drift findings that make "pin status" exit 1.
const defaultStatusFailOn = "skew,behind-previous,not-locked"

type statusOptions struct {
	*globalOptions
	// Format shadows the global --format, as outdated's does: status
	// speaks GitHub annotations too.
	Format string
	FailOn string
}

func newStatusCmd(g *globalOptions, s streams) *cobra.Command {
	o := &statusOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the drift matrix: every module in every environment",
		Long: `status shows, for every module and every environment it runs in, what
the environment's lock names, what its hosts run (and on how many), since
when every container has run it (the engines' start times), and its
findings:

  skew             the environment's hosts run different builds
  behind-previous  the environment builds come from (from = "…") runs a
                   newer build than this one locks: a promotion is due
  behind-upstream  upstream offers a newer build (when known)
  not-rolled-out   a host runs another build than the lock names
  not-locked       hosts run the module, the lock has no entry for it
  held             the entry is held by a manual pick (pin promote --pick)
  host-not-read    a host of the environment could not be read, or was skipped (skip_unreachable)

It writes nothing. It exits 1 when a finding in --fail-on occurs, 2 on bad
input and 3 when a host could not be reached. --format json writes the
matrix as docs/schema/status.schema.json describes it; --format github
writes GitHub Actions annotations (errors for --fail-on, warnings for the
others).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runStatus(cmd.Context(), o, s) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "table", "output format: table, json or github (workflow annotations)")
	f.StringVar(&o.FailOn, "fail-on", defaultStatusFailOn, `findings that make the exit code 1, comma-separated; "any" or "none"`)
	return cmd
}

func parseStatusFailOn(s string) ([]promote.Status, error) {
	switch s {
	case "none":
		return nil, nil
	case "any":
		return slices.Clone(promote.Statuses), nil
	}
	var out []promote.Status
	for p := range strings.SplitSeq(s, ",") {
		st := promote.Status(strings.TrimSpace(p))
		if !slices.Contains(promote.Statuses, st) {
			var names []string
			for _, k := range promote.Statuses {
				names = append(names, string(k))
			}
			return nil, withCode(exitInput, fmt.Errorf("--fail-on %q: unknown finding %q; write a comma-separated list of %s, or \"any\" or \"none\"", s, st, strings.Join(names, ", ")))
		}
		out = append(out, st)
	}
	return out, nil
}

// Status JSON (docs/schema/status.schema.json).
type statusOutput struct {
	Schema       int            `json:"schema"`
	Environments []statusEnv    `json:"environments"`
	Modules      []statusModule `json:"modules"`
	Failed       bool           `json:"failed"`
}

type statusEnv struct {
	Name  string   `json:"name"`
	Hosts []string `json:"hosts"`
	From  string   `json:"from,omitempty"`
	Soak  string   `json:"soak,omitempty"`
	Lock  string   `json:"lock"`
}

type statusModule struct {
	Name  string       `json:"name"`
	Cells []statusCell `json:"environments"`
}

type statusImage struct {
	Tag     string `json:"tag,omitempty"`
	Digest  string `json:"digest,omitempty"`
	Version string `json:"version,omitempty"`
}

type statusBuild struct {
	statusImage
	Hosts      []string `json:"hosts"`
	Containers int      `json:"containers"`
}

type statusCell struct {
	Environment string          `json:"environment"`
	Locked      *statusImage    `json:"locked"`
	Hold        string          `json:"hold,omitempty"`
	Promoted    *lock.Promotion `json:"-"`
	PromotedOut *statusPromoted `json:"promoted"`
	Runs        []statusBuild   `json:"runs"`
	Hosts       int             `json:"hosts"`
	Since       string          `json:"since,omitempty"`
	Previous    *statusImage    `json:"behind_previous"`
	Upstream    *statusImage    `json:"behind_upstream"`
	Unread      []string        `json:"unread,omitempty"`
	Unhealthy   []string        `json:"unhealthy,omitempty"`
	Findings    []string        `json:"findings"`
}

type statusPromoted struct {
	From    string   `json:"from"`
	Hosts   []string `json:"hosts"`
	Since   string   `json:"since,omitempty"`
	Release string   `json:"release"`
	// Health is what the engines reported of each container on those
	// hosts (the lock's health); absent when none was.
	Health []string `json:"health,omitempty"`
}

func imageOut(img *image.Image) *statusImage {
	if img == nil {
		return nil
	}
	v := img.Labels[image.LabelVersion]
	return &statusImage{Tag: img.Tag, Digest: img.Digest, Version: v}
}

func runStatus(ctx context.Context, o *statusOptions, s streams) error {
	if !slices.Contains([]string{"table", "json", "github"}, o.Format) {
		return withCode(exitInput, fmt.Errorf("--format %q: write table, json or github", o.Format))
	}
	failOn, err := parseStatusFailOn(o.FailOn)
	if err != nil {
		return err
	}
	in, err := loadStarts(ctx, o.globalOptions, s, "")
	if err != nil {
		return err
	}
	run, err := in.Select(source.Selection{Lock: o.Lock, ReadOnly: true, Now: o.now()})
	if err != nil {
		return withCode(exitInput, err)
	}
	warnOrphans(s, run.Orphans)
	envs := run.Envs
	mi := promote.MatrixInput{Catalogue: in.Catalogue, Observed: in.Observed, Record: in.Record(), Locks: map[string]*lock.Lock{}, Now: o.now(),
		Upstream: map[string]map[string]image.Image{}}
	// Behind upstream: each environment's candidates as pin outdated
	// finds them, by its own lock and hosts.
	var reports []*resolve.ModuleStatus
	for _, e := range envs {
		rs := resolve.Outdated(ctx, e.Input(o.now()), nil)
		reports = append(reports, rs...)
		mi.Upstream[e.Name] = upstreamOf(rs)
	}
	requestSummary(o.globalOptions, s, in.Registries)
	out := statusOutput{Schema: 1, Environments: []statusEnv{}, Modules: []statusModule{}}
	for _, e := range envs {
		var env promote.Env
		if ce := in.Catalogue.Environment(e.Name); ce != nil {
			env = envOf(ce)
		} else {
			// No environments: one, of every host.
			for _, h := range in.Catalogue.Hosts {
				env.Hosts = append(env.Hosts, h.Name)
			}
		}
		mi.Envs = append(mi.Envs, env)
		mi.Locks[env.Name] = e.Inputs.Lock
		se := statusEnv{Name: env.Name, Hosts: env.Hosts, From: env.From, Lock: e.Path}
		if se.Hosts == nil {
			se.Hosts = []string{}
		}
		if env.Soak > 0 {
			se.Soak = env.Soak.String()
		}
		out.Environments = append(out.Environments, se)
	}
	// The environments in the order builds flow: each after its from.
	slices.SortStableFunc(mi.Envs, func(a, b promote.Env) int { return depth(in.Catalogue, a.Name) - depth(in.Catalogue, b.Name) })
	for _, row := range promote.Matrix(mi) {
		sm := statusModule{Name: row.Module}
		for _, c := range row.Cells {
			sm.Cells = append(sm.Cells, cellOut(c, failOn, &out.Failed))
		}
		out.Modules = append(out.Modules, sm)
	}
	switch o.Format {
	case "json":
		err = writeJSON(s.Out, out)
	case "github":
		err = writeStatusAnnotations(s.Out, out, failOn)
	default:
		err = writeStatusTable(s.Out, out)
	}
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(in.Observed.Errors)) {
		if err := in.Observed.Errors[name]; badInput(err) {
			return withCode(exitInput, err)
		}
	}
	for _, r := range reports {
		for _, err := range r.Failures {
			if badInput(err) {
				return withCode(exitInput, err)
			}
		}
	}
	if msgs := unreachable(in.Observed, reports); len(msgs) > 0 {
		return withCode(exitSource, fmt.Errorf("%s", strings.Join(msgs, "; ")))
	}
	if out.Failed {
		return withCode(exitFindings, fmt.Errorf("drift: a finding in --fail-on (%s)", o.FailOn))
	}
	return nil
}

// upstreamOf is each module's upstream candidate in reports, by name.
func upstreamOf(reports []*resolve.ModuleStatus) map[string]image.Image {
	out := map[string]image.Image{}
	for _, r := range reports {
		if u := r.Upstream; u != nil {
			img := u.Image
			if u.Version != "" && img.Labels[image.LabelVersion] == "" {
				img.Labels = maps.Clone(img.Labels)
				if img.Labels == nil {
					img.Labels = map[string]string{}
				}
				img.Labels[image.LabelVersion] = u.Version
			}
			out[r.Module.Name] = img
		}
	}
	return out
}

// depth is how many from links lead to environment name.
func depth(cat *catalogue.Catalogue, name string) int {
	n := 0
	for e := cat.Environment(name); e != nil && e.From != "" && n < len(cat.Environments); e = cat.Environment(e.From) {
		n++
	}
	return n
}

func cellOut(c promote.Cell, failOn []promote.Status, failed *bool) statusCell {
	sc := statusCell{Environment: c.Env, Hosts: c.Hosts, Since: lock.FormatTime(c.Since), Previous: imageOut(c.Previous), Upstream: imageOut(c.Upstream),
		Unread: c.Unread, Findings: []string{}, Runs: []statusBuild{}}
	if e := c.Locked; e != nil {
		sc.Locked = &statusImage{Tag: e.Tag, Digest: e.Digest, Version: e.Version}
		sc.Hold = e.Hold
		if p := e.Promoted; p != nil {
			sc.PromotedOut = &statusPromoted{From: p.From, Hosts: p.Hosts, Since: lock.FormatTime(p.Since), Release: p.Release, Health: p.Health}
		}
	}
	for _, f := range c.Unhealthy {
		sc.Unhealthy = append(sc.Unhealthy, f.String())
	}
	for _, b := range c.Runs {
		img := b.Image
		sc.Runs = append(sc.Runs, statusBuild{statusImage: *imageOut(&img), Hosts: b.Hosts, Containers: b.Containers})
	}
	for _, st := range c.Statuses {
		sc.Findings = append(sc.Findings, string(st))
		if slices.Contains(failOn, st) {
			*failed = true
		}
	}
	return sc
}

func statusShort(i *statusImage) string {
	if i == nil {
		return "-"
	}
	s := i.Tag
	if s == "" {
		s = i.Version
	}
	if i.Digest != "" {
		if s != "" {
			s += " "
		}
		s += "(" + image.Short(i.Digest) + ")"
	}
	return s
}

func writeStatusTable(w io.Writer, out statusOutput) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODULE\tENVIRONMENT\tLOCKED\tRUNS\tSINCE\tFINDINGS")
	for _, m := range out.Modules {
		for _, c := range m.Cells {
			var runs []string
			for _, b := range c.Runs {
				runs = append(runs, fmt.Sprintf("%s on %d/%d", statusShort(&b.statusImage), len(b.Hosts), c.Hosts))
			}
			findings := strings.Join(c.Findings, ",")
			if c.Previous != nil {
				findings += " (from runs " + statusShort(c.Previous) + ")"
			}
			if c.Upstream != nil {
				findings += " (upstream offers " + statusShort(c.Upstream) + ")"
			}
			if len(c.Unhealthy) > 0 {
				findings += " (" + strings.Join(c.Unhealthy, "; ") + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sanitize(m.Name), sanitize(c.Environment), sanitize(statusShort(c.Locked)),
				sanitize(strings.Join(runs, "; ")), c.Since, sanitize(findings))
		}
	}
	return tw.Flush()
}

func writeStatusAnnotations(w io.Writer, out statusOutput, failOn []promote.Status) error {
	n := 0
	for _, m := range out.Modules {
		for _, c := range m.Cells {
			for _, f := range c.Findings {
				level := "warning"
				if slices.Contains(failOn, promote.Status(f)) {
					level = "error"
				}
				msg := fmt.Sprintf("module %s in %s: %s; locked %s", m.Name, c.Environment, f, statusShort(c.Locked))
				if f == string(promote.StatusBehindPrevious) {
					msg += "; the previous environment runs " + statusShort(c.Previous)
				}
				if f == string(promote.StatusBehindUpstream) {
					msg += "; upstream offers " + statusShort(c.Upstream)
				}
				fmt.Fprintf(w, "::%s title=%s::%s\n", level, escapeProperty(sanitize(m.Name+" in "+c.Environment+": "+f)), escapeData(sanitize(msg)))
				n++
			}
		}
	}
	_, err := fmt.Fprintf(w, "%d findings\n", n)
	return err
}
